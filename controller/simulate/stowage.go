package simulate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/go-hclog"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowaws "github.com/stowage-dev/stowage/controller/aws"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/disruption"
	"github.com/stowage-dev/stowage/controller/interruption"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
	"github.com/stowage-dev/stowage/controller/nodeclaim/capacityblock"
	"github.com/stowage-dev/stowage/controller/nodeclaim/drift"
	"github.com/stowage-dev/stowage/controller/nodeclaim/expiration"
	"github.com/stowage-dev/stowage/controller/nodeclaim/garbagecollection"
	"github.com/stowage-dev/stowage/controller/nodeclaim/lifecycle"
	"github.com/stowage-dev/stowage/controller/nodeclaim/podevents"
	"github.com/stowage-dev/stowage/controller/nodeclaim/repair"
	"github.com/stowage-dev/stowage/controller/nodeclass"
	"github.com/stowage-dev/stowage/controller/provisioning"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/termination"
)

// sweepEvery is how often every unfinished NodeClaim is reconciled again, the
// way the controllers' clock alarms would wake them.
const sweepEvery = 10 * time.Second

// reconciler names one of Stowage's controllers the simulator drives.
type reconciler int

const (
	lifecycleCtl reconciler = iota
	terminationCtl
	nodeTerminationCtl
	interruptionCtl
	interruptionClaimCtl
	driftCtl
	expirationCtl
	repairCtl
	podEventsCtl
	nodeClassCtl
	capacityBlockCtl
)

type dueKey struct {
	ctl  reconciler
	name string
}

// stowageSystem is Stowage's controllers (provisioning, NodeClaim lifecycle,
// drift and expiration, termination, garbage collection, interruption,
// disruption) as `stowage run` wires them, with the real AWS cloud provider
// talking to the emulator, driven on the virtual clock.
type stowageSystem struct {
	w           *world
	cloud       *recordingCloud
	batcher     *provisioning.Batcher
	triggers    *provisioning.Triggers
	provisioner *provisioning.Provisioner
	reconcilers map[reconciler]reconcile.Reconciler
	gc          *garbagecollection.Controller
	disruption  *disruption.Controller
	termination *termination.Controller
	// expiry and blockEnds are the expiration and capacity block
	// controllers' alarms, delivered by the simulator since it never starts
	// them as sources.
	expiry, blockEnds *nodeclaim.Alarms
	// repairs are the node repair controller's alarms, keyed by Node name.
	repairs *nodeclaim.Alarms
	// buffers is what the CapacityBuffers booked last (buffers.go).
	buffers *bufferBook
	// catalogue refreshes the cloud provider's catalogue on the schedule of
	// its refresh loop (reservations.go); nil when the scenario holds no
	// reservation, whose catalogue never changes.
	catalogue *catalogueRefresh
	lambda    *interruptionLambda
	// due reconciles and when they are due
	due *dueQueue
	// claims not Ready or being deleted, which the sweep wakes
	unfinished map[string]bool
	// pods is pod key -> its stored version, for the pod events watch
	pods map[string]*corev1.Pod
	// classes is NodeClass name -> the generation its status controller was woken for
	classes        map[string]int64
	nextSweep      time.Time
	nextGC         time.Time
	nextDisruption time.Time
}

func newStowageSystem(w *world) *stowageSystem {
	sys := &stowageSystem{w: w, due: newDueQueue(), unfinished: map[string]bool{}, pods: map[string]*corev1.Pod{}, classes: map[string]int64{}}
	w.waits = newWaitWatch(w.s)
	aws := newCloudProvider(w.s, w.emu, w.clk, staticClasses(w.s))
	moves := newPoolMoves(w)
	sys.cloud = &recordingCloud{CloudProvider: aws, w: w, claims: map[string]string{}, moves: moves}
	recorder := &eventLog{w: w, moves: moves}
	// One set of solve options for the provisioner and disruption, as `stowage run` has.
	solve := scheduler.Options{Preferences: w.preferences}
	sys.batcher = provisioning.NewBatcher(w.clk, provisioning.BatcherOptions{})
	sys.triggers = provisioning.NewTriggers(w.clk, w.cluster, sys.batcher)
	sys.provisioner = provisioning.NewProvisioner(w.cluster, sys.cloud, provisioning.ClientWriter{Client: w.kube}, recorder,
		provisioning.RandomSuffix(w.rng), provisioning.WithLogger(hclog.NewNullLogger()), provisioning.WithClock(w.clk),
		provisioning.WithCreateConcurrency(1), provisioning.WithSolveOptions(solve), provisioning.WithShortageMemory(aws))
	if n := w.s.Spec.SolveBoundPods; n > 0 {
		// The virtual clock stands still while a solve runs: a count of pods
		// tried bounds it instead, the same for a seed on any machine.
		provisioning.WithSolveBound(func() scheduler.Bound { return scheduler.PodBudget(n) })(sys.provisioner)
	}
	term := termination.New(w.clk, w.kube, sys.cloud, termination.Options{Recorder: recorder, Homes: disruption.NewHomes(w.clk, w.cluster, sys.cloud, solve)})
	expiry := expiration.New(w.clk, w.kube, expiration.Options{Recorder: recorder})
	interrupts := interruption.New(w.clk, w.kube, aws, interruption.Options{Recorder: recorder})
	blocks := capacityblock.New(w.clk, w.kube, capacityblock.Options{Recorder: recorder})
	sys.expiry, sys.blockEnds = expiry.Alarms(), blocks.Alarms()
	if len(w.s.Spec.CapacityReservations) > 0 {
		sys.catalogue = &catalogueRefresh{aws: aws, clk: w.clk, next: w.clk.Now().Add(stowaws.DefaultRefreshInterval)}
	}
	repairs := repair.New(w.clk, w.kube, repair.Options{Recorder: recorder})
	sys.repairs = repairs.Alarms()
	sys.termination = term
	sys.reconcilers = map[reconciler]reconcile.Reconciler{
		lifecycleCtl:         lifecycle.New(w.clk, w.kube, sys.cloud, lifecycle.Options{Recorder: recorder}),
		terminationCtl:       term,
		nodeTerminationCtl:   term.NodeReconciler(),
		interruptionCtl:      interrupts,
		interruptionClaimCtl: interrupts.ClaimReconciler(),
		driftCtl:             drift.New(w.clk, w.kube, sys.cloud, drift.Options{Recorder: recorder}),
		expirationCtl:        expiry,
		repairCtl:            repairs,
		podEventsCtl:         podevents.New(w.clk, w.kube, podevents.Options{}),
		nodeClassCtl:         nodeclass.New(w.clk, w.kube, aws, nodeclass.Options{Recorder: recorder}),
		capacityBlockCtl:     blocks,
	}
	sys.lambda = newInterruptionLambda(w, func(node string) { sys.due.set(dueKey{interruptionCtl, node}, w.clk.Now()) })
	sys.gc = garbagecollection.New(w.clk, w.kube, sys.cloud, garbagecollection.Options{Recorder: recorder})
	sys.disruption = disruption.New(w.clk, w.cluster, sys.cloud, disruption.ClientWriter{Client: w.kube}, disruption.Options{
		Recorder: recorder, Observer: disruptionLog{w: w}, OnRemove: sys.batcher.Trigger, NewID: provisioning.RandomSuffix(w.rng),
		Consolidation: disruption.ConsolidationOptions{Solve: solve}})
	w.kube.onWrite = func(obj client.Object, gone bool) {
		w.observe(obj, gone)
		sys.track(obj, gone)
		sys.wake(obj)
		sys.podEvent(obj, gone)
		sys.pdbEvent(obj, gone)
		sys.triggers.Observe(obj, gone)
	}
	now := w.clk.Now()
	sys.nextSweep, sys.nextGC = now.Add(sweepEvery), now.Add(garbagecollection.DefaultInterval)
	sys.nextDisruption = now.Add(disruption.DefaultInterval)
	return sys
}

func (sys *stowageSystem) start(ctx context.Context) error { return sys.bookBuffers(ctx) }

// wake is the other controllers' watches (provisioning's are its Triggers,
// which every write reaches as the controller's watches would): a write to a NodeClaim or Node makes the
// controllers that watch it reconcile it.
func (sys *stowageSystem) wake(obj client.Object) {
	now := sys.w.clk.Now()
	switch o := obj.(type) {
	case *v1alpha1.NodeClaim:
		for _, ctl := range []reconciler{lifecycleCtl, driftCtl, expirationCtl, capacityBlockCtl} {
			sys.due.set(dueKey{ctl, o.Name}, now)
		}
		if o.DeletionTimestamp != nil {
			sys.due.set(dueKey{terminationCtl, o.Name}, now)
		}
		if o.Annotations[v1alpha1.AnnotationInterruptionKind] != "" {
			sys.due.set(dueKey{interruptionClaimCtl, o.Name}, now)
		}
	case *v1alpha1.NodeClass:
		// Its status controller watches for new generations only.
		if gen, seen := sys.classes[o.Name]; !seen || gen != o.Generation {
			sys.classes[o.Name] = o.Generation
			sys.due.set(dueKey{nodeClassCtl, o.Name}, now)
		}
	case *corev1.Node:
		if name, ok := sys.cloud.claims[o.Spec.ProviderID]; ok {
			sys.due.set(dueKey{lifecycleCtl, name}, now)
		}
		if o.DeletionTimestamp != nil {
			sys.due.set(dueKey{nodeTerminationCtl, o.Name}, now)
		}
		if _, marked := interruption.Marks(o); marked { // the capacity block controller's mark
			sys.due.set(dueKey{interruptionCtl, o.Name}, now)
		}
		sys.due.set(dueKey{repairCtl, o.Name}, now)
	}
}

// podEvent is the pod events controller's watch: a pod binding to a node or
// leaving it makes the node due.
func (sys *stowageSystem) podEvent(obj client.Object, gone bool) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	key := pod.Namespace + "/" + pod.Name
	old, updated := sys.pods[key], pod
	if gone {
		updated = nil
		delete(sys.pods, key)
	} else {
		sys.pods[key] = pod
	}
	if podevents.Event(old, updated) {
		node := pod.Spec.NodeName
		if node == "" && old != nil {
			node = old.Spec.NodeName
		}
		sys.due.set(dueKey{podEventsCtl, node}, sys.w.clk.Now())
	}
}

// pdbEvent is the termination controllers' PodDisruptionBudget watch: a
// budget that allows a disruption again wakes the drains it refused.
func (sys *stowageSystem) pdbEvent(obj client.Object, gone bool) {
	pdb, ok := obj.(*policyv1.PodDisruptionBudget)
	if !ok {
		return
	}
	claims, nodes := sys.termination.WokenBy(pdb, gone)
	for _, name := range claims {
		sys.due.set(dueKey{terminationCtl, name}, sys.w.clk.Now())
	}
	for _, name := range nodes {
		sys.due.set(dueKey{nodeTerminationCtl, name}, sys.w.clk.Now())
	}
}

// step does the work due now: a closed batch window is provisioned, due
// reconciles run, unfinished claims are swept, instances garbage collected.
func (sys *stowageSystem) step(ctx context.Context) error {
	now := sys.w.clk.Now()
	if err := sys.lambda.deliver(ctx); err != nil {
		return err
	}
	if err := sys.bookBuffers(ctx); err != nil {
		return err
	}
	sys.checkNominations()
	if closed, _ := sys.batcher.Poll(); closed {
		done := func() {}
		if sys.w.batch != nil {
			done = sys.w.batch()
		}
		b, err := sys.provisioner.Provision(ctx)
		done()
		if b != nil {
			sys.triggers.RetryAt(b.RetryAt)
		}
		if err != nil {
			sys.w.out.actions = append(sys.w.out.actions, action{sys.w.elapsed(), "provisioning: " + err.Error()})
		}
		if err != nil || b.Cut() {
			sys.batcher.Trigger()
		}
		sys.triggers.Provisioned()
	}
	for _, req := range sys.expiry.Due(now) {
		sys.due.set(dueKey{expirationCtl, req.Name}, now)
	}
	for _, req := range sys.blockEnds.Due(now) {
		sys.due.set(dueKey{capacityBlockCtl, req.Name}, now)
	}
	for _, req := range sys.repairs.Due(now) {
		sys.due.set(dueKey{repairCtl, req.Name}, now)
	}
	if err := sys.catalogue.refresh(ctx, now); err != nil {
		return err
	}
	if !now.Before(sys.nextSweep) {
		sys.nextSweep = now.Add(sweepEvery)
		if err := sys.sweep(ctx); err != nil {
			return err
		}
	}
	if !now.Before(sys.nextDisruption) {
		sys.nextDisruption = now.Add(disruption.DefaultInterval)
		if err := sys.disruption.RunOnce(ctx); err != nil && !errors.Is(err, disruption.ErrNotSynced) {
			return fmt.Errorf("disruption: %w", err)
		}
	}
	if !now.Before(sys.nextGC) {
		sys.nextGC = now.Add(garbagecollection.DefaultInterval)
		if err := sys.gc.Collect(ctx); err != nil {
			return fmt.Errorf("garbage collection: %w", err)
		}
	}
	if err := sys.runDue(ctx); err != nil {
		return err
	}
	sys.checkNominations()
	return nil
}

// checkNominations lapses the nominations due by now, as the provisioning
// controller's loop does.
func (sys *stowageSystem) checkNominations() {
	if due := sys.triggers.Due(); !due.IsZero() && !due.After(sys.w.clk.Now()) {
		sys.triggers.CheckNominations()
	}
}

// runDue runs every reconcile due by now, including those its own writes make
// due. A loop that never settles is cut, after ten rounds for each reconcile
// the fleet holds (a controller a NodeClaim or Node each: a burst of 2,000
// claims at one instant is five times 2,000 rounds), and 10,000 more.
func (sys *stowageSystem) runDue(ctx context.Context) error {
	round := 0
	for ; round < 10000+10*len(sys.due.at); round++ {
		key, ok := sys.due.first(sys.w.clk.Now())
		if !ok {
			return nil
		}
		sys.due.remove(key)
		res, err := sys.reconcilers[key.ctl].Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: key.name}})
		switch {
		case err != nil:
			sys.due.set(key, sys.w.clk.Now().Add(time.Second))
		case res.RequeueAfter > 0:
			sys.due.set(key, sys.w.clk.Now().Add(res.RequeueAfter))
		}
	}
	return fmt.Errorf("reconciles did not settle within %d rounds at one instant", round)
}

// track keeps the set of claims that are not Ready yet or are being deleted.
func (sys *stowageSystem) track(obj client.Object, gone bool) {
	claim, ok := obj.(*v1alpha1.NodeClaim)
	if !ok {
		return
	}
	if gone || (claim.DeletionTimestamp == nil && nodeclaim.IsTrue(claim, v1alpha1.ConditionReady)) {
		delete(sys.unfinished, claim.Name)
		return
	}
	sys.unfinished[claim.Name] = true
}

// sweep makes every claim that is not Ready yet, or is being deleted, due:
// launch and registration timeouts and termination grace periods are checked
// there, as the controllers' clock alarms would.
func (sys *stowageSystem) sweep(ctx context.Context) error {
	now := sys.w.clk.Now()
	for _, name := range sortedKeys(sys.unfinished) {
		claim := &v1alpha1.NodeClaim{}
		if err := sys.w.kube.Get(ctx, client.ObjectKey{Name: name}, claim); err != nil {
			return client.IgnoreNotFound(err)
		}
		if claim.DeletionTimestamp != nil {
			sys.due.set(dueKey{terminationCtl, name}, now)
		} else {
			sys.due.set(dueKey{lifecycleCtl, name}, now)
		}
	}
	return nil
}

// next is when the system next has work: a batch window closing, a
// nomination lapsing, a due reconcile, or a sweep while claims are unfinished.
func (sys *stowageSystem) next() time.Time {
	var times []time.Time
	if _, at := sys.batcher.Poll(); !at.IsZero() {
		times = append(times, at)
	}
	if at := sys.triggers.Due(); !at.IsZero() {
		times = append(times, at)
	}
	if at, ok := sys.due.next(); ok {
		times = append(times, at)
	}
	times = append(times, sys.nextGC, sys.nextDisruption)
	for _, alarms := range []*nodeclaim.Alarms{sys.expiry, sys.blockEnds, sys.repairs} {
		if at, ok := alarms.Next(); ok {
			times = append(times, at)
		}
	}
	if at, ok := sys.catalogue.due(); ok {
		times = append(times, at)
	}
	if len(sys.unfinished) > 0 {
		times = append(times, sys.nextSweep)
	}
	return slices.MinFunc(times, func(a, b time.Time) int { return a.Compare(b) })
}

// recordingCloud is the cloud provider as the controllers see it; the
// simulator also learns from it what was launched and which fallbacks were taken.
type recordingCloud struct {
	cloudprovider.CloudProvider
	w *world
	// provider id -> claim name
	claims map[string]string
	moves  *poolMoves
}

func (c *recordingCloud) Create(ctx context.Context, claim *v1alpha1.NodeClaim) (*v1alpha1.NodeClaim, error) {
	out, err := c.CloudProvider.Create(ctx, claim)
	if cloudprovider.IsInsufficientCapacityError(err) {
		c.moves.launchFailed(claim)
	}
	if err != nil {
		c.w.waits.launchFailed(c.w, claim, err)
		return out, err
	}
	c.claims[out.Status.ProviderID] = claim.Name
	in := &simInstance{id: nodeclaim.InstanceID(out.Status.ProviderID),
		instanceType: out.Labels[corev1.LabelInstanceTypeStable], zone: out.Labels[corev1.LabelTopologyZone],
		capacityType: out.Labels[v1alpha1.LabelCapacityType]}
	in.price = c.w.price(offer(in.instanceType, in.zone, in.capacityType))
	if in.reservation = out.Labels[v1alpha1.LabelCapacityReservationID]; in.reservation != "" {
		in.price = 0 // the reservation's price pays for it (reservations.go)
	}
	c.w.launched(in, c.w.amiFamily(claim))
	if in.reservation == "" { // a reservation is taken first, not fallen back to
		c.w.recordFallback(claim, in)
	}
	c.moves.launched(claim, in)
	return out, nil
}

// Delete terminates through the real provider; the cloud controller manager
// then watches the instance until it is gone.
func (c *recordingCloud) Delete(ctx context.Context, claim *v1alpha1.NodeClaim) error {
	if id := nodeclaim.InstanceID(claim.Status.ProviderID); id != "" {
		c.w.terminating[id] = true
	}
	return c.CloudProvider.Delete(ctx, claim)
}

// eventLog keeps the events the controllers publish that the report shows.
type eventLog struct {
	w     *world
	moves *poolMoves
}

// Publish follows the provisioner's nominations, for fallbacks to another
// pool, and tells an observer; the report measures the rest by its effect.
func (l *eventLog) Publish(evs ...provisioning.Event) {
	for _, e := range evs {
		l.moves.planned(e)
	}
	l.w.waits.published(l.w, evs)
	l.w.observePublished(evs)
}

// Eventf keeps the controllers' warnings (launch failures, timeouts) as
// actions, and books an expired NodeClaim and a repaired node as disruptions.
func (l *eventLog) Eventf(regarding, _ runtime.Object, eventtype, reason, _, note string, args ...any) {
	if claim, ok := regarding.(*v1alpha1.NodeClaim); ok && reason == expiration.ReasonExpired {
		l.w.expired(claim)
		return
	}
	if node, ok := regarding.(*corev1.Node); ok && reason == repair.ReasonRepaired {
		l.w.repaired(node)
	}
	if eventtype != corev1.EventTypeWarning {
		return
	}
	if pod, ok := regarding.(*corev1.Pod); ok && reason == termination.ReasonEvictionRefused {
		l.w.waits.drainHeld(l.w.poolOfNode(pod.Spec.NodeName), pod.Spec.NodeName, l.w.clk.Now().Add(refusalFresh),
			fmt.Sprintf("the drain of node %s is held: pod %s/%s: %s", pod.Spec.NodeName, pod.Namespace, pod.Name, fmt.Sprintf(note, args...)))
	}
	name := ""
	if o, ok := regarding.(client.Object); ok {
		name = o.GetName()
	}
	text := fmt.Sprintf(note, args...)
	l.w.out.actions = append(l.w.out.actions, action{l.w.elapsed(), fmt.Sprintf("%s %s: %s", reason, name, text)})
	l.w.observeWarning(reason, name, text)
}

var (
	_ provisioning.Recorder = (*eventLog)(nil)
	_ events.EventRecorder  = (*eventLog)(nil)
)
