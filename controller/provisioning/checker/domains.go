package checker

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// mustPin reports whether a new claim must pin the key in its requirements to
// have a domain: the launch could otherwise land in any zone or capacity type.
func mustPin(key string) bool {
	return key == corev1.LabelTopologyZone || key == v1alpha1.LabelCapacityType
}

// domain returns the node's value for a topology key; ok is false when it has
// none. A new claim's zone and capacity type come from its requirements alone;
// other keys from its labels or a value every launch of it agrees on.
func (c *checker) domain(n *node, key string) (string, bool) {
	if v, ok := v1alpha1.LabelValue(n.labels, key); ok {
		return v, true
	}
	key = v1alpha1.CanonicalLabelKey(key)
	if key == corev1.LabelHostname {
		return n.name, true
	}
	if !n.isNew() || mustPin(key) {
		return "", false
	}
	return c.agreedValue(n, key)
}

func (c *checker) agreedValue(n *node, key string) (string, bool) {
	value := ""
	for i, v := range n.variants {
		val, ok := c.labelsOf(v.it)[key]
		if !ok || (i > 0 && val != value) {
			return "", false
		}
		value = val
	}
	return value, len(n.variants) > 0
}

// reportUnpinned records that a new claim holds pods whose topology rule on key
// needs the claim pinned to one value.
func (c *checker) reportUnpinned(n *node, pod *corev1.Pod, key string, constraint Constraint) {
	c.reportOnce("unpinned|"+n.name+"|"+key, pod, n.name, constraint,
		"unpinned: nodeclaim holds a pod with (or matched by) a %s rule on %s, but its requirements do not pin %s to one value (%s)",
		constraint, key, key, n.claim.Requirements)
}

// nodeAccepts reports whether some launch of the node satisfies the pod's node affinity.
func (c *checker) nodeAccepts(pod *corev1.Pod, n *node) bool {
	if !hasNodeConstraints(pod) {
		return true
	}
	if !n.isNew() {
		return matchesNode(pod, n.existingNode())
	}
	for _, v := range n.variants {
		if matchesNode(pod, c.variantNode(n, v)) {
			return true
		}
	}
	return false
}

// selectorFor builds a term's selector with matchLabelKeys (In the pod's value)
// and mismatchLabelKeys (NotIn the pod's value) merged in.
func selectorFor(pod *corev1.Pod, ls *metav1.LabelSelector, match, mismatch []string) (labels.Selector, error) {
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil, fmt.Errorf("parsing label selector: %w", err)
	}
	if ls == nil {
		sel = labels.Nothing()
	}
	for _, set := range []struct {
		keys []string
		op   selection.Operator
	}{{match, selection.In}, {mismatch, selection.NotIn}} {
		for _, k := range set.keys {
			v, ok := pod.Labels[k]
			if !ok {
				continue
			}
			r, err := labels.NewRequirement(k, set.op, []string{v})
			if err != nil {
				return nil, fmt.Errorf("merging label key %s: %w", k, err)
			}
			sel = sel.Add(*r)
		}
	}
	return sel, nil
}
