package interruption

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowevents "github.com/stowage-dev/stowage/controller/events"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
)

// Reasons given to OfferingMarker for the offering of a marked Node.
const (
	// ReasonSpotInterruption: EC2 reclaims the spot offering.
	ReasonSpotInterruption = "SpotInterruption"
	// ReasonCapacityReservationInterruption: the owner of an interruptible
	// capacity reservation takes its capacity back, so the reserved offering
	// shrinks.
	ReasonCapacityReservationInterruption = "CapacityReservationInterruption"
)

// offeringReasons are the kinds whose offering is marked unavailable, with
// the reason given and the capacity type assumed for a Node without the
// capacity-type label.
var offeringReasons = map[string]struct{ reason, capacityType string }{
	v1alpha1.InterruptionKindSpotInterruption:                {ReasonSpotInterruption, v1alpha1.CapacityTypeSpot},
	v1alpha1.InterruptionKindCapacityReservationInterruption: {ReasonCapacityReservationInterruption, v1alpha1.CapacityTypeReserved},
}

// progress is what has been done about a Node's current mark.
type progress struct {
	uid types.UID
	// id is the mark's identity (see Mark.identity).
	id string
	// received: the mark was reported, counted and its offering marked.
	received bool
	// done: nothing is left to do for this mark.
	done bool
	// replaced: this controller deleted the Node's claim, for this mark or an
	// earlier one, so a claim missing now does not make the Node unmanaged.
	replaced bool
}

// seen remembers progress per Node, so that resyncs, the controller's own
// status writes and marks redelivered by the Lambda act once, even when the
// cache has not yet caught up with this controller's writes.
type seen struct {
	mu sync.Mutex
	m  map[string]progress // target key -> progress on its current mark
}

// target is the object a mark is on: a Node, or a NodeClaim the Lambda
// marked because its instance had no Node yet.
type target struct {
	// key names it in seen: the Node's name, or "nodeclaim/" and the claim's.
	key string
	obj client.Object
	// name and providerID are the Node's (or the claim's) for the logs.
	name, providerID string
}

func nodeTarget(node *corev1.Node) target {
	return target{key: node.Name, obj: node, name: node.Name, providerID: node.Spec.ProviderID}
}

func claimTarget(claim *v1alpha1.NodeClaim) target {
	return target{key: "nodeclaim/" + claim.Name, obj: claim, name: claim.Name, providerID: claim.Status.ProviderID}
}

// get returns the progress on the mark of the object t names: fresh for a
// new mark, keeping whether this controller replaced the same object before.
func (s *seen) get(t target, m Mark) progress {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.m[t.key]
	switch {
	case !ok || p.uid != t.obj.GetUID():
		return progress{uid: t.obj.GetUID(), id: m.identity()}
	case p.id != m.identity():
		return progress{uid: t.obj.GetUID(), id: m.identity(), replaced: p.replaced}
	}
	return p
}

func (s *seen) put(node string, p progress) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[node] = p
}

func (s *seen) forget(node string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, node)
}

// handle takes the steps the mark still needs: find the claim, report the
// mark, replace the Node. Progress is saved before each step's metrics and
// events, so that whoever sees them sees the step done.
func (c *Controller) handle(ctx context.Context, node *corev1.Node, m Mark, p *progress) error {
	claim, managed, err := c.claimOf(ctx, node, m, p.replaced)
	if err != nil {
		return err
	}
	if !managed {
		p.done = true
		c.seen.put(node.Name, *p)
		c.notManaged(node, m)
		return nil
	}
	return c.act(ctx, nodeTarget(node), claim, m, p)
}

// act reports a new mark on t and replaces claim, the NodeClaim of t, unless
// it is gone or going or the kind asks for no replacement.
func (c *Controller) act(ctx context.Context, t target, claim *v1alpha1.NodeClaim, m Mark, p *progress) error {
	if !p.received {
		p.received = true
		c.seen.put(t.key, *p)
		if !recorded(claim, m) {
			c.receive(t, m)
		}
	}
	if claim == nil || !claim.DeletionTimestamp.IsZero() || !c.replaces(m.Kind) {
		p.done = true
		c.seen.put(t.key, *p)
		Actions.WithLabelValues(ActionNone).Inc()
		c.log.Debug("leaving node alone", "node", t.name, "kind", m.Kind, "event_id", m.EventID)
		return nil
	}
	return c.replace(ctx, t, claim, m, p)
}

// claimOf returns the Node's claim, or nil when none is needed: a Node being
// deleted is going anyway, and an unknown kind asks for nothing. managed is
// false for a Node no claim owns, unless this controller deleted its claim
// (for an earlier mark) itself.
func (c *Controller) claimOf(ctx context.Context, node *corev1.Node, m Mark, replaced bool) (claim *v1alpha1.NodeClaim, managed bool, err error) {
	if !node.DeletionTimestamp.IsZero() || !KnownKind(m.Kind) {
		return nil, true, nil
	}
	if claim, err = nodeclaim.ClaimForNode(ctx, c.kube, node); err != nil {
		return nil, false, err
	}
	return claim, claim != nil || replaced, nil
}

// replaces reports whether a mark of the kind gets its Node replaced.
func (c *Controller) replaces(kind string) bool {
	if kind == v1alpha1.InterruptionKindRebalanceRecommendation {
		return c.opts.ReplaceOnRebalance
	}
	return KnownKind(kind)
}

// receive reports a new mark (event, metric, log), reports the annotations it
// could not read, and marks the offering of a spot or capacity reservation
// interruption unavailable.
func (c *Controller) receive(t target, m Mark) {
	kind := m.Kind
	if !KnownKind(kind) {
		kind = KindUnknown
	}
	Received.WithLabelValues(kind).Inc()
	c.log.Info("interruption received", "node", t.name, "kind", m.Kind, "event_id", m.EventID,
		"deadline", m.formattedDeadline(), "instance_id", nodeclaim.InstanceID(t.providerID))
	stowevents.Publish(c.recorder, receivedEvent(t.obj, m, c.replaces(m.Kind)))
	annotations := t.obj.GetAnnotations()
	for _, key := range m.Malformed {
		c.log.Warn("malformed interruption mark", "node", t.name, "annotation", key, "value", annotations[key])
		stowevents.Publish(c.recorder, malformedEvent(t.obj, key, annotations[key]))
	}
	if r, ok := offeringReasons[m.Kind]; ok {
		c.markOffering(t, r.reason, r.capacityType)
	}
}

// markOffering tells the cloud that the offering the marked Node (or claim)
// runs on is short, from its instance type, zone and capacity type labels
// (capacityType when it has none: only spot instances get spot interruption
// warnings, only reserved ones capacity reservation interruptions).
func (c *Controller) markOffering(t target, reason, capacityType string) {
	if c.offerings == nil {
		return
	}
	labels := t.obj.GetLabels()
	instanceType, zone := labels[corev1.LabelInstanceTypeStable], labels[corev1.LabelTopologyZone]
	if ct := labels[v1alpha1.LabelCapacityType]; ct != "" {
		capacityType = ct
	}
	if instanceType == "" || zone == "" {
		c.log.Warn("not marking the offering: the node has no instance type or zone label", "node", t.name,
			"instance_type", instanceType, "zone", zone)
		return
	}
	d := c.offerings.MarkOfferingUnavailable(instanceType, zone, capacityType, reason)
	Actions.WithLabelValues(ActionMarkOffering).Inc()
	c.log.Info("offering marked unavailable", "node", t.name, "instance_type", instanceType, "zone", zone,
		"capacity_type", capacityType, "reason", reason, "avoid_for", d.String())
}

// notManaged reports a marked Node no NodeClaim owns, which is left alone.
func (c *Controller) notManaged(node *corev1.Node, m Mark) {
	Actions.WithLabelValues(ActionNotManaged).Inc()
	c.log.Warn("interrupted node is not managed by stowage", "node", node.Name, "kind", m.Kind, "event_id", m.EventID)
	stowevents.Publish(c.recorder, notManagedEvent(node, m))
}

// replace records the mark on the claim's Interrupted condition and deletes
// the claim; termination drains the Node and terminates the instance.
func (c *Controller) replace(ctx context.Context, t target, claim *v1alpha1.NodeClaim, m Mark, p *progress) error {
	if err := c.recordOn(ctx, claim, m); err != nil {
		return err
	}
	err := c.kube.Delete(ctx, claim, client.Preconditions{UID: &claim.UID})
	if apierrors.IsNotFound(err) {
		p.done = true
		c.seen.put(t.key, *p)
		Actions.WithLabelValues(ActionNone).Inc()
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting nodeclaim %s of interrupted node %s: %w", claim.Name, t.name, err)
	}
	p.replaced, p.done = true, true
	c.seen.put(t.key, *p)
	now := c.clk.Now()
	Actions.WithLabelValues(ActionReplace).Inc()
	if !m.Deadline.IsZero() {
		DeadlineMargin.Observe(m.Deadline.Sub(now).Seconds())
	}
	c.log.Info("replacing interrupted node", "node", t.name, "nodeclaim", claim.Name,
		"nodepool", claim.Labels[v1alpha1.LabelNodePool], "kind", m.Kind, "event_id", m.EventID,
		"deadline", m.formattedDeadline(), "instance_id", nodeclaim.InstanceID(t.providerID))
	stowevents.Publish(c.recorder, replacingEvent(t.obj, claim, m, now))
	return nil
}

// recordOn sets the claim's Interrupted condition to the mark, so that a
// restarted controller knows the mark was received.
func (c *Controller) recordOn(ctx context.Context, claim *v1alpha1.NodeClaim, m Mark) error {
	if recorded(claim, m) {
		return nil
	}
	stored := claim.DeepCopy()
	nodeclaim.SetCondition(claim, v1alpha1.ConditionInterrupted, metav1.ConditionTrue, reason(m.Kind), conditionMessage(m), c.clk.Now())
	err := c.kube.Status().Patch(ctx, claim, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{}))
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("setting the interrupted condition of nodeclaim %s: %w", claim.Name, err)
	}
	return nil
}

// recorded reports whether the claim's Interrupted condition records the mark.
func recorded(claim *v1alpha1.NodeClaim, m Mark) bool {
	if claim == nil {
		return false
	}
	cond := nodeclaim.Condition(claim, v1alpha1.ConditionInterrupted)
	return cond != nil && cond.Status == metav1.ConditionTrue && cond.Message == conditionMessage(m)
}

// conditionMessage describes the mark; it depends on nothing else, so that it
// identifies the mark.
func conditionMessage(m Mark) string {
	msg := m.Kind
	if m.EventID != "" {
		msg += " (event " + m.EventID + ")"
	}
	if !m.Deadline.IsZero() {
		msg += ", deadline " + m.Deadline.UTC().Format(time.RFC3339)
	}
	return msg
}
