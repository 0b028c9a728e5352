package simulate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/simulate/report"
)

// ZoneOutage takes a zone away from From until Until, as an Availability
// Zone failure does: every offering in the zone is short, and its instances'
// kubelets go silent, so that the node lifecycle controller marks their
// Nodes NotReady and taints them unreachable, and evicts their pods once
// the pods' toleration of that taint runs out.
type ZoneOutage struct {
	Zone string          `json:"zone"`
	From metav1.Duration `json:"from"`
	// Until is when the zone's offerings come back; the end of the run when zero.
	Until metav1.Duration `json:"until,omitempty"`
	// InstancesReturn says whether the zone's instances come back at Until
	// (their kubelets post Ready again and the taints go), or stay
	// unreachable until something replaces them.
	InstancesReturn bool `json:"instancesReturn,omitempty"`
}

const (
	// nodeMonitorGracePeriod is how long a node's kubelet may be silent
	// before the node lifecycle controller sets its Ready condition Unknown:
	// kube-controller-manager's --node-monitor-grace-period, 50 s by default
	// since Kubernetes 1.32.
	nodeMonitorGracePeriod = 50 * time.Second
	// defaultTolerationSeconds is how long the DefaultTolerationSeconds
	// admission plugin lets a pod tolerate the not-ready and unreachable
	// NoExecute taints when it does not say itself.
	defaultTolerationSeconds = int64(300)
)

// validateZoneOutages checks each outage's zone and window; two outages of
// one zone must not overlap.
func (s *Scenario) validateZoneOutages(bad func(string, string, ...any)) {
	end := func(o ZoneOutage) time.Duration {
		if o.Until.Duration == 0 {
			return 1<<63 - 1
		}
		return o.Until.Duration
	}
	for i, o := range s.Spec.ZoneOutages {
		f := fmt.Sprintf("zoneOutages[%d]", i)
		if !slices.Contains(s.zones(), o.Zone) {
			bad(f+".zone", "%q is not a zone of the scenario: use one of %s", o.Zone, strings.Join(s.zones(), ", "))
		}
		if o.From.Duration < 0 {
			bad(f+".from", "must not be negative")
		}
		if o.Until.Duration != 0 && o.Until.Duration <= o.From.Duration {
			bad(f+".until", "%s is not after from (%s); leave it out for a zone lost to the end of the run", o.Until.Duration, o.From.Duration)
		}
		for j, p := range s.Spec.ZoneOutages[:i] {
			if p.Zone == o.Zone && o.From.Duration < end(p) && p.From.Duration < end(o) {
				bad(f, "overlaps zoneOutages[%d] of the same zone: merge them into one", j)
			}
		}
	}
}

// withDefaultTolerations adds what the DefaultTolerationSeconds admission
// plugin adds to a pod that does not tolerate the not-ready or unreachable
// NoExecute taints: a toleration of each for 300 s.
func withDefaultTolerations(spec *corev1.PodSpec) {
	for _, key := range []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable} {
		taint := corev1.Taint{Key: key, Effect: corev1.TaintEffectNoExecute}
		if slices.ContainsFunc(spec.Tolerations, func(t corev1.Toleration) bool { return t.ToleratesTaint(logr.Discard(), &taint, true) }) {
			continue
		}
		spec.Tolerations = append(spec.Tolerations, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(defaultTolerationSeconds)})
	}
}

// outage is one scenario outage as the run goes.
type outage struct {
	spec           ZoneOutage
	started, ended bool
	result         report.ZoneOutage
}

// downInstance is an instance of a lost zone: its kubelet is silent.
type downInstance struct {
	in     *simInstance
	outage *outage
	since  time.Time
	// unreachable is when the node lifecycle controller tainted its Node;
	// zero before (or while it has no Node).
	unreachable time.Time
	// evictAt is when the taint manager next evicts a pod from it; zero for none.
	evictAt time.Time
}

// zoneOutages is the node lifecycle controller's and the taint manager's
// part in the scenario's zone outages.
type zoneOutages struct {
	list []*outage
	// instance id -> the instance while its zone has it silent
	down map[string]*downInstance
	// node name -> the instance of a silent kubelet
	downNodes map[string]*downInstance
}

func newZoneOutages(s *Scenario) *zoneOutages {
	z := &zoneOutages{down: map[string]*downInstance{}, downNodes: map[string]*downInstance{}}
	for _, o := range s.Spec.ZoneOutages {
		z.list = append(z.list, &outage{spec: o, result: report.ZoneOutage{Zone: o.Zone, From: epoch.Add(o.From.Duration),
			InstancesReturn: o.InstancesReturn}})
	}
	return z
}

// applyZoneOutages starts and ends the outages due, marks the silent nodes
// unreachable after the grace period, and evicts the pods whose toleration
// has run out.
func (w *world) applyZoneOutages(ctx context.Context) error {
	t := w.elapsed()
	for _, o := range w.outages.list {
		if !o.started && t >= o.spec.From.Duration {
			w.startOutage(o)
		}
		if o.started && !o.ended && o.spec.Until.Duration != 0 && t >= o.spec.Until.Duration {
			if err := w.endOutage(ctx, o); err != nil {
				return err
			}
		}
	}
	now := w.clk.Now()
	for _, id := range slices.Sorted(maps.Keys(w.outages.down)) {
		d := w.outages.down[id]
		if d.in.node != "" && d.unreachable.IsZero() && !now.Before(d.since.Add(nodeMonitorGracePeriod)) {
			if err := w.markUnreachable(ctx, d); err != nil {
				return err
			}
		}
		if !d.evictAt.IsZero() && !now.Before(d.evictAt) {
			if err := w.evictUnreachable(ctx, d); err != nil {
				return err
			}
		}
	}
	return nil
}

// startOutage makes the zone's offerings short and its instances silent.
func (w *world) startOutage(o *outage) {
	o.started = true
	w.capacity.setZoneOut(o.spec.Zone, true)
	for _, in := range w.sortedInstances() {
		if in.zone != o.spec.Zone || w.outages.down[in.id] != nil {
			continue
		}
		d := &downInstance{in: in, outage: o, since: w.clk.Now()}
		w.outages.down[in.id] = d
		if in.node != "" {
			w.outages.downNodes[in.node] = d
		}
		o.result.Nodes++
	}
	w.dirty = true
}

// endOutage gives the zone's offerings back and, if the scenario says so,
// its instances: their kubelets post Ready again, which lifts the taints.
func (w *world) endOutage(ctx context.Context, o *outage) error {
	o.ended = true
	o.result.Until = w.clk.Now()
	w.capacity.setZoneOut(o.spec.Zone, false)
	if !o.spec.InstancesReturn {
		return nil
	}
	for _, id := range slices.Sorted(maps.Keys(w.outages.down)) {
		d := w.outages.down[id]
		if d.outage != o {
			continue
		}
		w.outages.forget(d)
		if d.in.node == "" {
			d.in.readyAt = maxTime(d.in.readyAt, w.clk.Now())
			continue
		}
		if err := w.writeNode(ctx, d.in.node, nodeBack(w.clk.Now())); err != nil {
			return err
		}
	}
	return nil
}

// forget drops an instance that is back or gone.
func (z *zoneOutages) forget(d *downInstance) {
	delete(z.down, d.in.id)
	if d.in.node != "" {
		delete(z.downNodes, d.in.node)
	}
}

// lostWith counts the pods lost with a terminated instance of a lost zone.
func (z *zoneOutages) lostWith(in *simInstance, pods int) {
	if d, ok := z.down[in.id]; ok {
		d.outage.result.PodsLost += pods
		z.forget(d)
	}
}

// silent reports whether the node's kubelet is silent: its pods do not start.
func (z *zoneOutages) silent(node string) bool { return z.downNodes[node] != nil }

// holds reports whether an instance is in a lost zone: it cannot register.
func (z *zoneOutages) holds(id string) bool { return z.down[id] != nil }

// markUnreachable is the node lifecycle controller's part: the Ready
// condition goes Unknown and the unreachable taints go on, NoSchedule and
// NoExecute.
func (w *world) markUnreachable(ctx context.Context, d *downInstance) error {
	now := w.clk.Now()
	if err := w.writeNode(ctx, d.in.node, nodeUnreachable(now)); err != nil {
		return err
	}
	d.unreachable = now
	d.evictAt = w.nextEviction(d)
	return nil
}

// evictUnreachable is the taint manager's part: the pods whose toleration
// of the unreachable taint has run out are deleted, and their workloads
// replace them.
func (w *world) evictUnreachable(ctx context.Context, d *downInstance) error {
	now := w.clk.Now()
	for _, sp := range w.podsOn(d.in.node) {
		if at, ok := evictionTime(sp.pod, d.unreachable); ok && !now.Before(at) {
			if err := w.deletePod(ctx, sp); err != nil {
				return err
			}
			d.outage.result.PodsLost++
		}
	}
	d.evictAt = w.nextEviction(d)
	return nil
}

// nextEviction is the earliest eviction still due from the node; zero for none.
func (w *world) nextEviction(d *downInstance) time.Time {
	var next time.Time
	for _, sp := range w.podsOn(d.in.node) {
		if at, ok := evictionTime(sp.pod, d.unreachable); ok && (next.IsZero() || at.Before(next)) {
			next = at
		}
	}
	return next
}

// evictionTime is when the taint manager evicts a pod from a node tainted
// unreachable at tainted: at once without a toleration of the taint, after
// its tolerationSeconds with one, never with one that has none.
func evictionTime(pod *corev1.Pod, tainted time.Time) (time.Time, bool) {
	taint := corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}
	i := slices.IndexFunc(pod.Spec.Tolerations, func(t corev1.Toleration) bool { return t.ToleratesTaint(logr.Discard(), &taint, true) })
	switch {
	case i < 0:
		return tainted, true
	case pod.Spec.Tolerations[i].TolerationSeconds == nil:
		return time.Time{}, false
	default:
		return tainted.Add(time.Duration(max(0, *pod.Spec.Tolerations[i].TolerationSeconds)) * time.Second), true
	}
}

// nodeUnreachable is the node lifecycle controller's write to a node whose
// kubelet went silent.
func nodeUnreachable(now time.Time) func(*corev1.Node) {
	return func(n *corev1.Node) {
		setReady(n, corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status.", now)
		n.Spec.Taints = append(withoutUnreachable(n.Spec.Taints),
			corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule},
			corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: ptr.To(metav1.NewTime(now))})
	}
}

// nodeBack is the write once the kubelet posts Ready again.
func nodeBack(now time.Time) func(*corev1.Node) {
	return func(n *corev1.Node) {
		setReady(n, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status", now)
		n.Spec.Taints = withoutUnreachable(n.Spec.Taints)
	}
}

func withoutUnreachable(taints []corev1.Taint) []corev1.Taint {
	return slices.DeleteFunc(slices.Clone(taints), func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeUnreachable })
}

func setReady(n *corev1.Node, status corev1.ConditionStatus, reason, message string, now time.Time) {
	for i := range n.Status.Conditions {
		if c := &n.Status.Conditions[i]; c.Type == corev1.NodeReady {
			*c = corev1.NodeCondition{Type: corev1.NodeReady, Status: status, Reason: reason, Message: message,
				LastHeartbeatTime: c.LastHeartbeatTime, LastTransitionTime: metav1.NewTime(now)}
			return
		}
	}
}

// writeNode changes a stored Node's spec and status, as two writes (the
// object, then its status subresource) as the API server takes them.
func (w *world) writeNode(ctx context.Context, name string, change func(*corev1.Node)) error {
	node := &corev1.Node{}
	if err := w.kube.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		return client.IgnoreNotFound(err)
	}
	changed := node.DeepCopy()
	change(changed)
	if err := w.kube.Update(ctx, changed); err != nil {
		return fmt.Errorf("updating node %s: %w", name, err)
	}
	changed.Status = *node.Status.DeepCopy()
	change(changed)
	if err := w.kube.Status().Update(ctx, changed); err != nil {
		return fmt.Errorf("updating the status of node %s: %w", name, err)
	}
	w.dirty = true
	return nil
}

// outageNext is the next instant an outage starts or ends, a silent node is
// marked unreachable, or a pod's toleration runs out.
func (w *world) outageNext() []time.Time {
	var out []time.Time
	for _, o := range w.outages.list {
		out = append(out, epoch.Add(o.spec.From.Duration))
		if o.spec.Until.Duration != 0 {
			out = append(out, epoch.Add(o.spec.Until.Duration))
		}
	}
	for _, d := range w.outages.down {
		if d.in.node != "" && d.unreachable.IsZero() {
			out = append(out, d.since.Add(nodeMonitorGracePeriod))
		}
		if !d.evictAt.IsZero() {
			out = append(out, d.evictAt)
		}
	}
	return out
}

// observeOutages notes the first instant after an outage's first loss at
// which every pod the workloads want is Running.
func (w *world) observeOutages() {
	var waiting []*outage
	for _, o := range w.outages.list {
		if o.result.PodsLost > 0 && o.result.AllRunning.IsZero() {
			waiting = append(waiting, o)
		}
	}
	if len(waiting) == 0 || w.unbound > 0 || len(w.starting) > 0 || w.busy() {
		return
	}
	for _, o := range waiting {
		o.result.AllRunning = w.clk.Now()
	}
}

// outageResults are the outages' results for the report.
func (z *zoneOutages) results() []report.ZoneOutage {
	out := make([]report.ZoneOutage, 0, len(z.list))
	for _, o := range z.list {
		out = append(out, o.result)
	}
	return out
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// updateNodeStatus is a Node status update (the fake client's Update keeps
// the stored status of a kind it knows has the subresource, so it is done
// on the tracker, as pods' and PodDisruptionBudgets' are).
func (k *kube) updateNodeStatus(node *corev1.Node) error {
	current, ok := peek[*corev1.Node](k.mirror, client.ObjectKeyFromObject(node))
	if !ok {
		return apierrors.NewNotFound(corev1.Resource("nodes"), node.Name)
	}
	if node.ResourceVersion != "" && node.ResourceVersion != current.ResourceVersion {
		return apierrors.NewConflict(corev1.Resource("nodes"), node.Name, errors.New("object was modified"))
	}
	n, err := strconv.ParseUint(cmp.Or(current.ResourceVersion, "0"), 10, 64)
	if err != nil {
		return fmt.Errorf("node %s has resource version %q: %w", node.Name, current.ResourceVersion, err)
	}
	stored := current.DeepCopy()
	stored.Status = *node.Status.DeepCopy()
	stored.ResourceVersion = strconv.FormatUint(n+1, 10)
	if err := k.tracker.Update(corev1.SchemeGroupVersion.WithResource("nodes"), stored, ""); err != nil {
		return err
	}
	k.mirror.adopt(stored)
	stored.DeepCopyInto(node)
	k.feed(stored, false)
	k.onWrite(stored, false)
	return nil
}
