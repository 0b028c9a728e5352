package interruption

import (
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// Mark is one interruption mark on a Node: what AWS announced, by when the
// instance is expected to go, and which event said so.
type Mark struct {
	// Kind is one of v1alpha1.InterruptionKinds. A Mark read by Marks may
	// carry another value; Malformed then names the kind annotation.
	Kind string
	// Deadline is when the instance is expected to be interrupted; zero when
	// the event named no time.
	Deadline time.Time
	// EventID is the id of the EventBridge event; empty when unknown.
	EventID string
	// Malformed names, for a Mark read by Marks, the annotations whose value
	// was not understood: a kind that is not one of v1alpha1.InterruptionKinds,
	// or a deadline that is not RFC 3339 (read as no deadline). MarkNode
	// ignores it.
	Malformed []string
}

// Marks reads the interruption mark off a Node (or a NodeClaim, which the
// Lambda marks when its instance has no Node yet); ok is false when the
// object carries none (no kind annotation, or an empty one).
func Marks(obj metav1.Object) (m Mark, ok bool) {
	a := obj.GetAnnotations()
	if a[v1alpha1.AnnotationInterruptionKind] == "" {
		return Mark{}, false
	}
	m = Mark{Kind: a[v1alpha1.AnnotationInterruptionKind], EventID: a[v1alpha1.AnnotationInterruptionEventID]}
	if !KnownKind(m.Kind) {
		m.Malformed = append(m.Malformed, v1alpha1.AnnotationInterruptionKind)
	}
	if raw := a[v1alpha1.AnnotationInterruptionDeadline]; raw != "" {
		t, err := time.Parse(time.RFC3339, raw)
		if err != nil {
			m.Malformed = append(m.Malformed, v1alpha1.AnnotationInterruptionDeadline)
		} else {
			m.Deadline = t.UTC()
		}
	}
	return m, true
}

// MarkNode writes m onto the Node object (the caller saves it): the kind,
// deadline and event id annotations, and the stowage.dev/interrupted
// NoSchedule taint whose value is the kind. It is the only writer of that
// format. It reports whether the Node changed, and keeps what is most
// urgent, so that redelivered and late events are harmless:
//   - a mark with the event id the Node already carries changes nothing;
//   - a rebalance recommendation does not replace a mark of another kind;
//   - a deadline the Node already carries is kept when m has none or a later one.
func MarkNode(node *corev1.Node, m Mark) bool {
	m, ok := merged(node, m)
	if !ok {
		return false
	}
	before := node.DeepCopy()
	setAnnotations(node, m)
	setTaint(node, m.Kind)
	return !equality.Semantic.DeepEqual(before.Annotations, node.Annotations) ||
		!equality.Semantic.DeepEqual(before.Spec.Taints, node.Spec.Taints)
}

// MarkClaim writes m onto a NodeClaim whose instance has no Node yet, by the
// rules of MarkNode but with the annotations alone: the Node that registers
// later has no mark, and the controller replaces the claim from this one.
func MarkClaim(claim *v1alpha1.NodeClaim, m Mark) bool {
	m, ok := merged(claim, m)
	if !ok {
		return false
	}
	before := maps.Clone(claim.Annotations)
	setAnnotations(claim, m)
	return !maps.Equal(before, claim.Annotations)
}

// merged is m as it is to be written over the mark obj carries, or false when
// it changes nothing (see MarkNode).
func merged(obj metav1.Object, m Mark) (Mark, bool) {
	current, marked := Marks(obj)
	if marked && m.EventID != "" && current.EventID == m.EventID {
		return m, false
	}
	if marked && m.Kind == v1alpha1.InterruptionKindRebalanceRecommendation && current.Kind != m.Kind {
		return m, false
	}
	if marked && !current.Deadline.IsZero() && (m.Deadline.IsZero() || current.Deadline.Before(m.Deadline)) {
		m.Deadline = current.Deadline
	}
	return m, true
}

func setAnnotations(obj metav1.Object, m Mark) {
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[v1alpha1.AnnotationInterruptionKind] = m.Kind
	setOrDelete(a, v1alpha1.AnnotationInterruptionEventID, m.EventID)
	deadline := ""
	if !m.Deadline.IsZero() {
		deadline = m.Deadline.UTC().Format(time.RFC3339)
	}
	setOrDelete(a, v1alpha1.AnnotationInterruptionDeadline, deadline)
	obj.SetAnnotations(a)
}

func setOrDelete(annotations map[string]string, key, value string) {
	if value == "" {
		delete(annotations, key)
		return
	}
	annotations[key] = value
}

// setTaint replaces any interrupted taint with a NoSchedule one valued kind.
func setTaint(node *corev1.Node, kind string) {
	taint := corev1.Taint{Key: v1alpha1.TaintKeyInterrupted, Value: kind, Effect: corev1.TaintEffectNoSchedule}
	taints := slices.DeleteFunc(slices.Clone(node.Spec.Taints), func(t corev1.Taint) bool {
		return t.Key == v1alpha1.TaintKeyInterrupted
	})
	node.Spec.Taints = append(taints, taint)
}

// KnownKind reports whether kind is one of v1alpha1.InterruptionKinds.
func KnownKind(kind string) bool {
	return slices.Contains(v1alpha1.InterruptionKinds, kind)
}

// identity names what a mark announces, for telling a new mark from the same
// one seen again: the event id, or the kind and deadline without one.
func (m Mark) identity() string {
	if m.EventID != "" {
		return m.EventID
	}
	return m.Kind + "@" + m.formattedDeadline()
}

func (m Mark) formattedDeadline() string {
	if m.Deadline.IsZero() {
		return ""
	}
	return m.Deadline.UTC().Format(time.RFC3339)
}

// reason turns a kind into the CamelCase reason of the claim's Interrupted
// condition ("spot-interruption" -> "SpotInterruption").
func reason(kind string) string {
	var b strings.Builder
	for _, word := range strings.Split(kind, "-") {
		if word != "" {
			b.WriteString(strings.ToUpper(word[:1]) + word[1:])
		}
	}
	return b.String()
}
