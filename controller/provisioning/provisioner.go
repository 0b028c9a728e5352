package provisioning

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/provisioningrequest"
	"github.com/stowage-dev/stowage/controller/state"
)

// ErrNotSynced is returned by Provision while the cluster state is incomplete.
// Nothing was decided; the caller retries after the next batch window.
var ErrNotSynced = errors.New("cluster state is not synced")

// nameAttempts bounds the retries when a generated NodeClaim name is taken.
const nameAttempts = 3

// Provisioner solves one batch of pending pods at a time and creates the
// NodeClaims the decision asks for.
type Provisioner struct {
	cluster  *state.Cluster
	cloud    cloudprovider.CloudProvider
	writer   ClusterWriter
	recorder Recorder
	newID    func() string
	log      hclog.Logger
	solve    scheduler.Options
	clk      clock.PassiveClock
	// createConcurrency bounds the claims created at once.
	createConcurrency int
	// dryRun reports decisions instead of acting on them (WithDryRun).
	dryRun bool
	// ramps notices workloads growing pod by pod.
	ramps ramps
	// requests remembers pods' requests from batch to batch.
	requests *scheduler.RequestMemory
	// bookingsSeen is told where each decision put the bookings' virtual
	// pods (WithBookingObserver).
	bookingsSeen func([]scheduler.BookingResult)
	// bound gives each batch's solve its bound as it starts (WithSolveBound).
	bound func() scheduler.Bound
	// shortages says when a short offering may be tried again (retry.go).
	shortages ShortageMemory
}

// Option configures a Provisioner.
type Option func(*Provisioner)

// WithLogger sets the logger; nothing is logged without one.
func WithLogger(log hclog.Logger) Option { return func(p *Provisioner) { p.log = log } }

// DefaultCreateConcurrency is how many NodeClaims a batch creates at once.
const DefaultCreateConcurrency = 8

// WithCreateConcurrency sets how many claims are created at once; 1 creates
// them one after another, in order, for a writer that is not safe for
// concurrent use (the simulator's).
func WithCreateConcurrency(n int) Option { return func(p *Provisioner) { p.createConcurrency = n } }

// WithClock sets the clock the scheduling duration is measured on; the real
// clock when unset.
func WithClock(clk clock.PassiveClock) Option { return func(p *Provisioner) { p.clk = clk } }

// WithSolveOptions sets the options every Solve runs with.
func WithSolveOptions(opts scheduler.Options) Option { return func(p *Provisioner) { p.solve = opts } }

// WithSolveBound bounds each batch's solve: bound is called as the solve
// starts (TimeBound for --solve-time-bound). Unbounded when unset.
func WithSolveBound(bound func() scheduler.Bound) Option {
	return func(p *Provisioner) { p.bound = bound }
}

// TimeBound bounds a solve to d from its start, on clk.
func TimeBound(clk clock.PassiveClock, d time.Duration) func() scheduler.Bound {
	return func() scheduler.Bound { return scheduler.Deadline{Clock: clk, At: clk.Now().Add(d)} }
}

// NewProvisioner returns a provisioner reading cluster, asking cloud for
// instance types, creating claims through writer and publishing events to
// recorder. newID returns the random suffix of each claim's name.
func NewProvisioner(cluster *state.Cluster, cloud cloudprovider.CloudProvider, writer ClusterWriter, recorder Recorder,
	newID func() string, opts ...Option) *Provisioner {
	p := &Provisioner{cluster: cluster, cloud: cloud, writer: writer, recorder: recorder, newID: newID, log: hclog.NewNullLogger(),
		clk: clock.RealClock{}, createConcurrency: DefaultCreateConcurrency}
	for _, o := range opts {
		o(p)
	}
	return p
}

// RandomSuffix returns an ID function giving five lower-case letters and
// digits from r, so that a seeded r gives the same names every run.
func RandomSuffix(r *rand.Rand) func() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	return func() string {
		b := make([]byte, 5)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
}

// Batch is what one Provision call saw and did.
type Batch struct {
	// Pods are the pending pods the batch solved for.
	Pods []*corev1.Pod
	// Decision is the solver's answer.
	Decision *scheduler.Results
	// NodeClaims are the claims created, in the decision's order.
	NodeClaims []*v1alpha1.NodeClaim
	// RetryAt is when to run again for the pods left unschedulable: when an
	// offering the cloud avoids may be tried again; zero for no retry.
	RetryAt time.Time
}

// Provision solves for the pods kube-scheduler could not place and that are
// not already nominated, creates a NodeClaim per new node in the decision,
// nominates each placed pod to its claim or node, and publishes an event on
// every pod. It returns ErrNotSynced, deciding nothing, until the state is
// synced. A failed create does not stop the others; the errors are joined.
func (p *Provisioner) Provision(ctx context.Context) (*Batch, error) {
	if !p.cluster.Synced(ctx) {
		StateSynced.Set(0)
		return nil, ErrNotSynced
	}
	StateSynced.Set(1)
	b := &Batch{Pods: append(p.provisionablePods(), p.leavingPods()...)}
	bookings := p.cluster.Bookings()
	if len(b.Pods) == 0 && len(bookings) == 0 && !anyFloor(p.cluster.NodePools()) {
		return b, nil
	}
	types := p.instanceTypes(ctx)
	recordOfferings(types)
	snap := p.cluster.Snapshot(b.Pods, types)
	p.requests = p.requests.Next()
	snap.Bookings, snap.Requests = bookings, p.requests
	start := p.clk.Now()
	snap.Expected = p.ramps.expected(snap, start)
	opts := p.decisionOptions()
	if p.bound != nil {
		opts.Bound = p.bound()
	}
	b.Decision = scheduler.Solve(snap, opts)
	SchedulingDuration.Observe(p.clk.Since(start).Seconds())
	UnschedulablePods.Set(float64(len(b.Decision.Unschedulable)))
	p.log.Info("solved a batch", "pods", len(b.Pods), "nodeclaims", len(b.Decision.NewNodeClaims),
		"existing", len(b.Decision.Existing), "unschedulable", len(b.Decision.Unschedulable), "bookings", len(bookings),
		"waiting_for_next_batch", len(b.Decision.Waiting))
	p.observeBookings(b.Decision.Bookings)
	if p.dryRun {
		p.reportDryRun(b.Decision)
		return b, nil
	}
	var errs []error
	for i, claim := range p.createAll(ctx, b.Decision.NewNodeClaims, snap.NodePools) {
		nc := b.Decision.NewNodeClaims[i]
		if claim.err != nil {
			errs = append(errs, claim.err)
			continue
		}
		p.launched(claim.claim, nc, poolNamed(snap.NodePools, nc.NodePool))
		b.NodeClaims = append(b.NodeClaims, claim.claim)
	}
	p.nominateExisting(b.Decision.Existing, snap.Nodes)
	p.reportUnschedulable(b.Decision.Unschedulable)
	p.reportWaiting(b.Decision.Waiting)
	b.RetryAt = p.retryAt(b)
	return b, errors.Join(errs...)
}

// Cut reports whether the solve's bound cut the batch short: some pods wait
// for the next batch, which the caller opens.
func (b *Batch) Cut() bool { return b != nil && b.Decision != nil && len(b.Decision.Waiting) > 0 }

func (p *Provisioner) provisionablePods() []*corev1.Pod {
	bookings := p.cluster.Bookings()
	return slices.DeleteFunc(p.cluster.PendingPods(), func(pod *corev1.Pod) bool {
		return !provisionable(pod) || p.cluster.IsNominated(pod) || usesBookedRoom(pod, bookings)
	})
}

// leavingPods returns the pods still running on nodes being deleted (their
// NodeClaim or Node is: an expiry, an interruption, a disruption command, a
// user), as pending copies: they count as pending, so that their new
// capacity is launched when the deletion starts, not after the drain evicts
// them, and they are nominated to it, which keeps it from looking idle. A
// copy keeps the pod's name, so a nomination is the pod's; a pod that has
// its next home already is counted there, and not planned again. A node a
// disruption command has only marked is left out: the command launches its
// replacement itself, and takes the mark back if that fails.
func (p *Provisioner) leavingPods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, sn := range p.cluster.Snapshot(nil, nil).Nodes {
		if sn.Node == nil || sn.Node.DeletionTimestamp == nil && (sn.NodeClaim == nil || sn.NodeClaim.DeletionTimestamp == nil) {
			continue
		}
		for _, pod := range sn.Pods {
			if pod.Spec.NodeName != sn.Node.Name || pod.DeletionTimestamp != nil || ownedByDaemonSet(pod) ||
				pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
				continue
			}
			if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror || p.cluster.HasNextHome(pod) {
				continue
			}
			moving := *pod
			moving.Spec.NodeName = ""
			out = append(out, &moving)
		}
	}
	return out
}

// provisionable reports whether kube-scheduler has found no node for pod: it
// is unbound, not being deleted, marked Unschedulable, and not a DaemonSet's
// (DaemonSet pods follow their nodes; the solver counts them per node).
func provisionable(pod *corev1.Pod) bool {
	if pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil || ownedByDaemonSet(pod) {
		return false
	}
	return slices.ContainsFunc(pod.Status.Conditions, func(c corev1.PodCondition) bool {
		return c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable
	})
}

// usesBookedRoom reports whether pod consumes a ProvisioningRequest whose
// room is booked: it uses that room and no other, as Cluster Autoscaler has
// it, so no capacity is launched for it. Once the request books nothing
// (every pod came, the booking expired or was revoked), its pods are
// provisioned for as any other.
func usesBookedRoom(pod *corev1.Pod, bookings []scheduler.Booking) bool {
	name, ok := provisioningrequest.Consumes(pod)
	if !ok {
		return false
	}
	owner := scheduler.BookingOwner{Kind: provisioningrequest.Kind, Namespace: pod.Namespace, Name: name}
	return slices.ContainsFunc(bookings, func(b scheduler.Booking) bool { return b.Owner == owner })
}

func ownedByDaemonSet(pod *corev1.Pod) bool {
	owner := metav1.GetControllerOf(pod)
	return owner != nil && owner.Kind == "DaemonSet"
}

// instanceTypes asks the cloud for each pool's types. A pool whose types
// cannot be listed is left without any, so the decision launches nothing there.
func (p *Provisioner) instanceTypes(ctx context.Context) map[string][]*cloudprovider.InstanceType {
	out := map[string][]*cloudprovider.InstanceType{}
	for _, pool := range p.cluster.NodePools() {
		types, err := p.cloud.InstanceTypes(ctx, pool)
		if err != nil {
			p.log.Error("listing instance types", "nodepool", pool.Name, "error", err)
			continue
		}
		out[pool.Name] = types
	}
	return out
}

func poolNamed(pools []*v1alpha1.NodePool, name string) *v1alpha1.NodePool {
	i := slices.IndexFunc(pools, func(np *v1alpha1.NodePool) bool { return np.Name == name })
	return pools[i] // the solver only makes claims for pools in the snapshot
}

// launch creates the claim for nc, records it and its pods in the state and
// publishes a Nominated event per pod.
// created is the outcome of one claim's creation.
type created struct {
	claim *v1alpha1.NodeClaim
	err   error
}

// createAll creates the decision's claims, up to createConcurrency at once:
// one after another, the API round trips of a large batch added up to most of
// the time from a pod's first FailedScheduling to its instance's launch.
// Names are drawn in decision order first, so that a seeded name source gives
// the same names whatever the interleaving.
func (p *Provisioner) createAll(ctx context.Context, ncs []*scheduler.NewNodeClaim, pools []*v1alpha1.NodePool) []created {
	claims := make([]*v1alpha1.NodeClaim, len(ncs))
	for i, nc := range ncs {
		claims[i] = NodeClaimFor(nc, poolNamed(pools, nc.NodePool))
		claims[i].Name = claims[i].Labels[v1alpha1.LabelNodePool] + "-" + p.newID()
	}
	out := make([]created, len(ncs))
	sem := make(chan struct{}, max(p.createConcurrency, 1))
	var wg sync.WaitGroup
	for i := range claims {
		sem <- struct{}{}
		wg.Add(1)
		// With a concurrency of 1 the next create starts only once this one has
		// released the token: one at a time, in order.
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i].claim, out[i].err = p.writer.CreateNodeClaim(ctx, claims[i])
		}()
	}
	wg.Wait()
	for i := range out {
		if apierrors.IsAlreadyExists(out[i].err) {
			out[i].claim, out[i].err = p.create(ctx, claims[i])
		}
		if out[i].err != nil {
			out[i].err = fmt.Errorf("creating a nodeclaim for nodepool %s: %w", claims[i].Labels[v1alpha1.LabelNodePool], out[i].err)
		}
	}
	return out
}

// launched records a created claim: the state waits for it, its pods are
// nominated to it, and each gets an event.
func (p *Provisioner) launched(claim *v1alpha1.NodeClaim, nc *scheduler.NewNodeClaim, pool *v1alpha1.NodePool) {
	p.cluster.NodeClaimCreated(claim)
	for _, pod := range realPods(nc.Pods) {
		p.cluster.Nominate(pod, claim.Name)
		p.recorder.Publish(NominatedEvent(pod, claim))
	}
	p.log.Info("created nodeclaim", "nodeclaim", claim.Name, "nodepool", pool.Name,
		"instance_type", nc.InstanceTypes[0].Name, "instance_types", len(nc.InstanceTypes), "pods", len(nc.Pods),
		"room_for_expected_pods", nc.Anticipated)
}

// create names claim after its pool with a fresh suffix, trying another
// suffix when the name is taken.
func (p *Provisioner) create(ctx context.Context, claim *v1alpha1.NodeClaim) (*v1alpha1.NodeClaim, error) {
	pool := claim.Labels[v1alpha1.LabelNodePool]
	var err error
	for range nameAttempts {
		claim.Name = pool + "-" + p.newID()
		var created *v1alpha1.NodeClaim
		if created, err = p.writer.CreateNodeClaim(ctx, claim); err == nil {
			return created, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, err
		}
	}
	return nil, err
}

// NodeClaimFor is the NodeClaim (without a name) that launches nc from pool:
// the pool template's labels, annotations, taints and node class, the
// decision's requirements (instance types included) and resource requests,
// and the pool's hash (v1alpha1.NodePoolHash) for drift.
func NodeClaimFor(nc *scheduler.NewNodeClaim, pool *v1alpha1.NodePool) *v1alpha1.NodeClaim {
	tmpl := pool.Spec.Template.DeepCopy()
	labels := maps.Clone(tmpl.ObjectMeta.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[v1alpha1.LabelNodePool] = pool.Name
	annotations := maps.Clone(tmpl.ObjectMeta.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	// The pool's template digest at launch: the drift controller compares it
	// with the pool's current one, as the Terraform provider's plan does.
	annotations[v1alpha1.AnnotationNodePoolHash] = v1alpha1.NodePoolHash(pool)
	annotations[v1alpha1.AnnotationHashVersion] = v1alpha1.HashVersion
	claim := &v1alpha1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations},
		Spec: v1alpha1.NodeClaimSpec{
			Taints:                 tmpl.Spec.Taints,
			StartupTaints:          tmpl.Spec.StartupTaints,
			Requirements:           nc.Requirements.API(),
			Resources:              v1alpha1.ResourceRequirements{Requests: nonZero(nc.Requests.List())},
			NodeClassRef:           tmpl.Spec.NodeClassRef,
			ExpireAfter:            tmpl.Spec.ExpireAfter,
			TerminationGracePeriod: tmpl.Spec.TerminationGracePeriod,
		},
	}
	if pool.UID != "" {
		claim.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "NodePool",
			Name: pool.Name, UID: pool.UID, BlockOwnerDeletion: ptr.To(true)}}
	}
	return claim
}

// nonZero drops the resources the claim does not need at all.
func nonZero(rl corev1.ResourceList) corev1.ResourceList {
	maps.DeleteFunc(rl, func(_ corev1.ResourceName, q resource.Quantity) bool { return q.IsZero() })
	return rl
}

// nominateExisting nominates the pods the decision put on existing nodes or
// in-flight claims.
func (p *Provisioner) nominateExisting(placements []scheduler.Placement, nodes []*scheduler.StateNode) {
	targets := map[string]client.Object{}
	for _, sn := range nodes {
		if sn.Node != nil {
			targets[sn.Name()] = sn.Node
		} else {
			targets[sn.Name()] = sn.NodeClaim
		}
	}
	for _, pl := range placements {
		if scheduler.IsVirtual(pl.Pod) {
			continue
		}
		p.cluster.Nominate(pl.Pod, pl.Node)
		p.recorder.Publish(NominatedEvent(pl.Pod, targets[pl.Node]))
	}
}

// reportWaiting tells each pod the bound left untried that it waits for the
// next batch, and counts the cut.
func (p *Provisioner) reportWaiting(pods []scheduler.Unschedulable) {
	if len(pods) == 0 {
		return
	}
	SolvesCut.Inc()
	p.log.Info("the solve's time bound cut the batch short; the rest wait for the next batch", "pods", len(pods))
	for _, u := range pods {
		if !scheduler.IsVirtual(u.Pod) {
			p.recorder.Publish(WaitingForBatchEvent(u.Pod, u.Reason))
		}
	}
}

func (p *Provisioner) reportUnschedulable(pods []scheduler.Unschedulable) {
	for _, u := range pods {
		if scheduler.IsVirtual(u.Pod) {
			continue // its booking's status says it
		}
		p.log.Info("pod cannot be provisioned", "pod", u.Pod.Namespace+"/"+u.Pod.Name, "reason", u.Reason)
		p.recorder.Publish(FailedSchedulingEvent(u.Pod, u.Reason))
	}
}
