package simulate

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/scheduling"
	"github.com/stowage-dev/stowage/controller/simulate/report"
	"github.com/stowage-dev/stowage/controller/state"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

// epoch is the virtual clock's start: a fixed instant, so runs repeat.
var epoch = time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)

// world is one simulated cluster and cloud: the workloads, kube-scheduler,
// the kubelets and the cloud controller manager, around whichever autoscaler
// (a system) runs in it. Everything happens on one goroutine, on the virtual
// clock, so a seed gives one history.
type world struct {
	s        *Scenario
	clk      *clocktesting.FakeClock
	rng      *rand.Rand
	kube     *kube
	cluster  *state.Cluster
	emu      *awsemu.Emulator
	capacity *capacityModel
	infos    map[string]catalogue.Info
	// images are the emulator's public image parameters -> image ids.
	images map[string]string
	// preferences is the preference policy Stowage's provisioner solves with.
	preferences scheduler.PreferencePolicy

	workloads     []*workloadState
	interruptions *interruptions
	outages       *zoneOutages
	// namespace/name -> pod the world tracks
	pods map[string]*simPod
	// podList holds the tracked pods in creation order; forgotten ones are
	// dropped lazily.
	podList []*simPod
	// created counts the pods created, which numbers them (simPod.seq).
	created int
	// node name -> the pods bound to it, in no order; those forgotten or gone
	// are dropped lazily (podsOn)
	onNode map[string][]*simPod
	// pendingList holds the pods not bound yet in creation order; bound and
	// forgotten ones are dropped lazily (pendingPods).
	pendingList []*simPod
	// nodeNames are the registered nodes' names, sorted, and nodeFits the
	// allocatable of each as read from its stored Node.
	nodeNames []string
	nodeFits  map[string]nodeFit
	// unbound counts tracked pods not bound yet; starting are the bound pods
	// not Running yet; finishing the Job pods running until their finishAt.
	unbound             int
	starting, finishing []*simPod
	// node name -> the requests of the pods bound to it
	requested map[string]scheduling.Resources
	// node name -> the DaemonSet pods running on it
	daemonPods map[string][]*corev1.Pod
	// blockEnds are the scenario's Capacity Blocks' ends, by reservation id.
	blockEnds map[string]time.Time
	// poolKeys are the capacity model's offerings, sorted once.
	poolKeys []awsemu.PoolKey
	// instances launched and not yet gone, by id
	instances map[string]*simInstance
	// booting are the instances whose kubelet has not registered yet, by id
	booting map[string]*simInstance
	// instances asked to terminate or interrupted, which the cloud controller
	// manager watches until they are gone
	terminating map[string]bool
	// voluntary names the nodes a voluntary disruption (consolidation,
	// emptiness, drift, expiry) is taking away
	voluntary map[string]bool
	// dirty says the cluster changed (a node turned usable, a pod went), so
	// kube-scheduler moves its unschedulable pods to the backoff queue
	// (schedqueue.go); newPods that new pods wait;
	// podsChanged that a pod was written since the PDBs' statuses were.
	dirty, newPods, podsChanged bool
	// eventAt is the last cluster event kube-scheduler saw, and nextRetry
	// when its queue next gives a pending pod a try (zero for none).
	eventAt, nextRetry time.Time
	// takesPods names the nodes that could take a pending pod when last
	// written (mayTakePods).
	takesPods map[string]bool
	// preempted counts the pods kube-scheduler preempted (preemption.go).
	preempted int

	out *systemResult
	// observer watches the run (observer.go); nil for none.
	observer observer
	// waits finds why pods wait (waits.go); nil for a system it does not know.
	waits *waitWatch
	// batch wraps each provisioning batch (Options.Batch); nil for none.
	batch func() (done func())
}

// simPod is a pod of a workload and its history.
type simPod struct {
	// pod is the latest copy the world wrote.
	pod *corev1.Pod
	// requests are the pod's requests by the kubelet's rule, computed once.
	requests scheduling.Resources
	key      string
	// seq is the pod's place in creation order.
	seq      int
	tier     string
	workload *workloadState
	created  time.Time
	// bound is when kube-scheduler bound it; zero while pending.
	bound     time.Time
	node      string
	runningAt time.Time
	running   bool
	// attempts counts kube-scheduler's failed tries at the pod, the last at
	// triedAt (schedqueue.go).
	attempts int
	triedAt  time.Time
	// finishAt is when a Job's pod completes.
	finishAt time.Time
	// replaces is when the pod this one replaces was evicted by a
	// voluntary disruption; zero for any other pod.
	replaces time.Time
}

// simInstance is an instance some autoscaler launched.
type simInstance struct {
	id, instanceType, zone, capacityType string
	price                                float64
	// reservation is the capacity reservation it runs in, whose price pays for it.
	reservation string
	launched    time.Time
	// readyAt is when its kubelet registers a Ready node.
	readyAt time.Time
	node    string
	group   string
}

func newWorld(s *Scenario, seed int64, name string) (*world, error) {
	clk := clocktesting.NewFakeClock(epoch)
	emu, images, err := newEmulator(s, clk, seed)
	if err != nil {
		return nil, err
	}
	cluster := state.NewCluster(clk)
	k, err := newKube(cluster, clk)
	if err != nil {
		return nil, err
	}
	w := &world{s: s, clk: clk, rng: rand.New(rand.NewPCG(uint64(seed), 0x5354)), kube: k, cluster: cluster, emu: emu,
		capacity: newCapacityModel(s, emu), infos: map[string]catalogue.Info{}, images: images,
		pods: map[string]*simPod{}, instances: map[string]*simInstance{}, booting: map[string]*simInstance{}, terminating: map[string]bool{},
		voluntary: map[string]bool{}, requested: map[string]scheduling.Resources{}, daemonPods: map[string][]*corev1.Pod{},
		onNode: map[string][]*simPod{}, nodeFits: map[string]nodeFit{}, out: newSystemResult(name)}
	k.onEvict = w.evicted
	for _, info := range catalogue.Builtin() {
		w.infos[info.Name] = info
	}
	w.poolKeys = emu.PoolKeys()
	w.blockEnds = seedReservations(s, emu)
	for _, wl := range s.Spec.Workloads {
		w.workloads = append(w.workloads, newWorkloadState(s, wl))
	}
	w.interruptions = newInterruptions(s)
	w.outages = newZoneOutages(s)
	return w, nil
}

// poolOfNode is the NodePool a node's labels name, or "".
func (w *world) poolOfNode(name string) string {
	node := &corev1.Node{}
	if err := w.kube.Get(context.Background(), client.ObjectKey{Name: name}, node); err != nil {
		return ""
	}
	return node.Labels[v1alpha1.LabelNodePool]
}

// elapsed is the virtual time since the start.
func (w *world) elapsed() time.Duration { return w.clk.Since(epoch) }

// seed creates the objects the scenario starts with.
func (w *world) seed(ctx context.Context) error {
	for _, obj := range w.initialObjects() {
		if err := w.kube.Create(ctx, obj); err != nil {
			return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return nil
}

func (w *world) initialObjects() []client.Object {
	var out []client.Object
	for _, np := range w.s.NodePools {
		out = append(out, np.DeepCopy())
	}
	for _, nc := range w.s.NodeClasses {
		out = append(out, nc.DeepCopy())
	}
	for _, ds := range w.s.DaemonSets {
		out = append(out, ds.DeepCopy())
	}
	for _, pc := range w.s.PriorityClasses {
		out = append(out, pc.DeepCopy())
	}
	for _, pdb := range w.s.PodDisruptionBudgets {
		out = append(out, pdb.DeepCopy())
	}
	return out
}

// draw picks a duration uniformly in r.
func (w *world) draw(r DurationRange) time.Duration {
	lo, hi := r.Min.Duration, r.Max.Duration
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(w.rng.Int64N(int64(hi-lo)+1))
}

// bootTime draws the time from launch to a Ready node for an AMI family.
func (w *world) bootTime(family string) time.Duration {
	if r, ok := w.s.Spec.Boot[family]; ok {
		return w.draw(r)
	}
	if r, ok := w.s.Spec.Boot["default"]; ok {
		return w.draw(r)
	}
	return w.draw(DurationRange{Min: duration(60 * time.Second), Max: duration(120 * time.Second)})
}

// launched registers an instance an autoscaler started; its kubelet comes up
// after the boot time.
func (w *world) launched(in *simInstance, amiFamily string) {
	in.launched = w.clk.Now()
	in.readyAt = in.launched.Add(w.bootTime(amiFamily))
	w.instances[in.id] = in
	w.booting[in.id] = in
	w.out.launched++
	w.interruptions.launched(w, in)
}

// sortedInstances lists the live instances by launch time, then id.
func (w *world) sortedInstances() []*simInstance { return byLaunch(w.instances) }

// byLaunch lists instances by launch time, then id.
func byLaunch(instances map[string]*simInstance) []*simInstance {
	out := make([]*simInstance, 0, len(instances))
	for _, in := range instances {
		out = append(out, in)
	}
	slices.SortFunc(out, func(a, b *simInstance) int {
		return cmp.Or(a.launched.Compare(b.launched), cmp.Compare(a.id, b.id))
	})
	return out
}

// sortedPods lists the tracked pods in creation order. The slice is the
// world's own: callers may forget pods while they range over it, not append.
func (w *world) sortedPods() []*simPod {
	if len(w.podList) > 2*len(w.pods)+64 {
		w.podList = slices.DeleteFunc(w.podList, func(sp *simPod) bool { return w.pods[sp.key] != sp })
	}
	out := make([]*simPod, 0, len(w.pods))
	for _, sp := range w.podList {
		if w.pods[sp.key] == sp {
			out = append(out, sp)
		}
	}
	return out
}

// pendingPods lists the tracked pods not bound yet, in creation order. The
// slice is the world's own: callers must not change it.
func (w *world) pendingPods() []*simPod {
	w.pendingList = slices.DeleteFunc(w.pendingList, func(sp *simPod) bool { return w.pods[sp.key] != sp || !sp.bound.IsZero() })
	return w.pendingList
}

// podsOn lists the tracked pods bound to a node, in creation order.
func (w *world) podsOn(node string) []*simPod {
	live := slices.DeleteFunc(w.onNode[node], func(sp *simPod) bool { return w.pods[sp.key] != sp || sp.node != node })
	slices.SortFunc(live, func(a, b *simPod) int { return cmp.Compare(a.seq, b.seq) })
	w.onNode[node] = live
	return slices.Clone(live)
}

// observe keeps the world's pods in step with writes the controllers make: a
// pod evicted or deleted is forgotten, so that its workload replaces it.
func (w *world) observe(obj client.Object, gone bool) {
	if node, isNode := obj.(*corev1.Node); isNode {
		w.nodeEvent(node, gone)
	}
	pod, ok := obj.(*corev1.Pod)
	if ok {
		w.podsChanged = true
	}
	if !ok || (!gone && pod.DeletionTimestamp == nil) {
		return
	}
	if sp, tracked := w.pods[pod.Namespace+"/"+pod.Name]; tracked {
		w.observeLeft(pod)
		w.forget(sp)
	}
}

// evicted notes a pod the API server evicts from a node a voluntary
// disruption takes away: its workload's next pod replaces it.
func (w *world) evicted(pod *corev1.Pod) {
	if sp, ok := w.pods[pod.Namespace+"/"+pod.Name]; ok && sp.workload != nil && w.voluntary[pod.Spec.NodeName] {
		sp.workload.evicted = append(sp.workload.evicted, w.clk.Now())
	}
}

func splitKey(key string) (namespace, name string) {
	ns, n, _ := strings.Cut(key, "/")
	return ns, n
}

func duration(d time.Duration) metav1.Duration { return metav1.Duration{Duration: d} }

// price is an offering's hourly price in the capacity model.
func (w *world) price(o report.Offering) float64 {
	p, _ := w.emu.Pool(awsemu.PoolKey{InstanceType: o.InstanceType, Zone: o.Zone, CapacityType: o.CapacityType})
	return p.Price
}

// short reports whether an offering can start no instance now.
func (w *world) short(o report.Offering) bool {
	p, ok := w.emu.Pool(awsemu.PoolKey{InstanceType: o.InstanceType, Zone: o.Zone, CapacityType: o.CapacityType})
	return !ok || p.Short || p.Capacity <= 0
}

// amiFamily is the family of the claim's NodeClass image, for its boot time.
func (w *world) amiFamily(claim *v1alpha1.NodeClaim) string {
	for _, nc := range w.s.NodeClasses {
		if claim.Spec.NodeClassRef == nil || nc.Name != claim.Spec.NodeClassRef.Name {
			continue
		}
		for _, t := range nc.Spec.AMISelectorTerms {
			if family, _, ok := strings.Cut(t.Alias, "@"); ok {
				return family
			}
		}
	}
	return "default"
}

// recordFallback notes a launch that did not get the cheapest offering its
// claim allows because that offering was short.
func (w *world) recordFallback(claim *v1alpha1.NodeClaim, in *simInstance) {
	chosen := offer(in.instanceType, in.zone, in.capacityType)
	preferred, ok := w.cheapestAllowed(claim)
	if !ok || preferred == chosen || !w.short(preferred) {
		return
	}
	w.out.fallbacks = append(w.out.fallbacks, report.Fallback{At: w.clk.Now(), Short: preferred, Chosen: chosen,
		Reason: fmt.Sprintf("nodeclaim %s of nodepool %s: %s is short", claim.Name, claim.Labels[v1alpha1.LabelNodePool], preferred)})
}

// cheapestAllowed is the cheapest offering the claim's requirements allow, in
// the capacity model, short or not.
func (w *world) cheapestAllowed(claim *v1alpha1.NodeClaim) (report.Offering, bool) {
	reqs := scheduling.FromAPI(claim.Spec.Requirements)
	var best report.Offering
	bestPrice := math.Inf(1)
	for _, key := range w.poolKeys {
		o := offer(key.InstanceType, key.Zone, key.CapacityType)
		if !reqs.Get(corev1.LabelInstanceTypeStable).Has(o.InstanceType) || !reqs.Get(corev1.LabelTopologyZone).Has(o.Zone) ||
			!reqs.Get(v1alpha1.LabelCapacityType).Has(o.CapacityType) {
			continue
		}
		if p := w.price(o); p < bestPrice {
			best, bestPrice = o, p
		}
	}
	return best, !math.IsInf(bestPrice, 1)
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
