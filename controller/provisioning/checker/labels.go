package checker

import (
	"maps"
	"math"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
)

// apiReqs is a requirement list in the API form; the checker evaluates it with
// its own code rather than the solver's requirement algebra.
type apiReqs []v1alpha1.NodeSelectorRequirementWithMinValues

// allows reports whether a node whose label key is value (or absent, when
// present is false) satisfies every requirement on key. Absent keys satisfy
// only NotIn and DoesNotExist.
func (rs apiReqs) allows(key, value string, present bool) bool {
	for _, r := range rs {
		if r.Key == key && !opAllows(r, value, present) {
			return false
		}
	}
	return true
}

func opAllows(r v1alpha1.NodeSelectorRequirementWithMinValues, value string, present bool) bool {
	switch r.Operator {
	case v1alpha1.OperatorIn:
		return present && slices.Contains(r.Values, value)
	case v1alpha1.OperatorNotIn:
		return !present || !slices.Contains(r.Values, value)
	case v1alpha1.OperatorExists:
		return present
	case v1alpha1.OperatorDoesNotExist:
		return !present
	case v1alpha1.OperatorGt, v1alpha1.OperatorGte, v1alpha1.OperatorLt, v1alpha1.OperatorLte:
		return present && compareInt(r.Operator, value, r.Values)
	}
	return false // an unsatisfiable shape ("Impossible")
}

func compareInt(op, value string, bounds []string) bool {
	if len(bounds) != 1 {
		return false
	}
	v, err1 := strconv.Atoi(value)
	b, err2 := strconv.Atoi(bounds[0])
	if err1 != nil || err2 != nil {
		return false
	}
	switch op {
	case v1alpha1.OperatorGt:
		return v > b
	case v1alpha1.OperatorGte:
		return v >= b
	case v1alpha1.OperatorLt:
		return v < b
	}
	return v <= b
}

// pinned are the keys held to exactly one value by a single-valued In.
func (rs apiReqs) pinned() map[string]string {
	out := map[string]string{}
	for _, r := range rs {
		if r.Operator == v1alpha1.OperatorIn && len(r.Values) == 1 {
			out[r.Key] = r.Values[0]
		}
	}
	return out
}

// typeLabels are the labels an instance type pins to a single value.
func typeLabels(it *cloudprovider.InstanceType) map[string]string {
	out := map[string]string{}
	for key, r := range it.Requirements {
		if vals := r.Values(); len(vals) == 1 {
			out[key] = vals[0]
		}
	}
	return out
}

// typeAllows reports whether the type's own label set on key admits value.
func typeAllows(it *cloudprovider.InstanceType, key, value string) bool {
	r, ok := it.Requirements[key]
	if !ok || r.Len() == math.MaxInt {
		return true // unconstrained, or a complement the checker does not enumerate
	}
	return slices.Contains(r.Values(), value)
}

// mergeLabels returns a copy of base overlaid with each of extra in turn.
func mergeLabels(base map[string]string, extra ...map[string]string) map[string]string {
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	for _, e := range extra {
		maps.Copy(out, e)
	}
	return out
}

// fakeNode wraps labels as a Node for the component-helpers matchers.
func fakeNode(name string, labels map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// hasNodeConstraints reports whether the pod restricts node labels at all.
func hasNodeConstraints(pod *corev1.Pod) bool {
	return len(pod.Spec.NodeSelector) > 0 || (pod.Spec.Affinity != nil && pod.Spec.Affinity.NodeAffinity != nil &&
		pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil)
}

// matchesNode reports whether the pod's nodeSelector and required node affinity
// accept the node; a malformed affinity accepts nothing.
func matchesNode(pod *corev1.Pod, node *corev1.Node) bool {
	if !hasNodeConstraints(pod) {
		return true
	}
	ok, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)
	return err == nil && ok
}

// untolerated returns the first NoSchedule or NoExecute taint the tolerations do not tolerate.
func untolerated(tolerations []corev1.Toleration, taints []corev1.Taint) (corev1.Taint, bool) {
	blocking := func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}
	return corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), taints, tolerations, blocking, true)
}

// podKey is namespace/name.
func podKey(pod *corev1.Pod) string {
	return pod.Namespace + "/" + pod.Name
}
