package nodeclaimtest

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// NodePool returns a pool named for the test, with a node class reference and
// the given template labels.
func (e *Env) NodePool(labels map[string]string) *v1alpha1.NodePool {
	return &v1alpha1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: e.ID + "-pool"},
		Spec: v1alpha1.NodePoolSpec{Template: v1alpha1.NodeClaimTemplate{
			ObjectMeta: v1alpha1.TemplateObjectMeta{Labels: labels},
			Spec:       v1alpha1.NodeClaimTemplateSpec{NodeClassRef: nodeClassRef()},
		}},
	}
}

// NodeClaim returns an on-demand claim of the pool.
func (e *Env) NodeClaim(name string, pool *v1alpha1.NodePool) *v1alpha1.NodeClaim {
	claim := &v1alpha1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: e.ID + "-" + name},
		Spec: v1alpha1.NodeClaimSpec{
			NodeClassRef: nodeClassRef(),
			Requirements: []v1alpha1.NodeSelectorRequirementWithMinValues{{
				Key: v1alpha1.LabelCapacityType, Operator: v1alpha1.OperatorIn, Values: []string{v1alpha1.CapacityTypeOnDemand},
			}},
		},
	}
	if pool != nil {
		claim.Labels = map[string]string{v1alpha1.LabelNodePool: pool.Name}
		claim.Spec.Taints = pool.Spec.Template.Spec.Taints
		claim.Spec.StartupTaints = pool.Spec.Template.Spec.StartupTaints
		claim.Spec.TerminationGracePeriod = pool.Spec.Template.Spec.TerminationGracePeriod
	}
	return claim
}

func nodeClassRef() *v1alpha1.NodeClassReference {
	return &v1alpha1.NodeClassReference{Group: v1alpha1.Group, Kind: v1alpha1.DefaultNodeClassKind, Name: "default"}
}

// Node returns a Node as a kubelet registers it for the provider id, with the
// unregistered taint Stowage's bootstrap puts on, and 4 CPUs, 16Gi and 110 pods.
func (e *Env) Node(name, providerID string) *corev1.Node {
	resources := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("4"),
		corev1.ResourceMemory: resource.MustParse("16Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: e.ID + "-" + name, Labels: map[string]string{corev1.LabelHostname: e.ID + "-" + name}},
		Spec:       corev1.NodeSpec{ProviderID: providerID, Taints: []corev1.Taint{v1alpha1.UnregisteredNoExecuteTaint}},
		Status:     corev1.NodeStatus{Capacity: resources, Allocatable: resources},
	}
}

// KwokNode is Node run by kwok, which marks it Ready and plays kubelet for its
// pods: it starts them and removes them once they are deleted.
func (e *Env) KwokNode(name, providerID string) *corev1.Node {
	node := e.Node(name, providerID)
	node.Spec.Taints = nil
	node.Annotations = map[string]string{testenv.KwokNodeAnnotation: testenv.KwokNodeAnnotationValue}
	return node
}

// SetReady marks the Node Ready as its kubelet would, and lifts the
// not-ready taint the API server's admission put on it, as
// kube-controller-manager's node lifecycle controller (not running here) would.
func (e *Env) SetReady(node *corev1.Node) {
	e.T.Helper()
	e.UpdateStatus(node, func() {
		now := metav1.NewTime(e.Clock.Now())
		node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
			LastHeartbeatTime: now, LastTransitionTime: now, Reason: "KubeletReady"}}
	})
	e.Update(node, func() {
		node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeNotReady })
	})
}

// Pod returns a pod bound to the node, in the namespace.
func (e *Env) Pod(namespace, name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "app", Image: "registry.invalid/app:1"}},
		},
	}
}

// Namespace creates a namespace for the test's pods and returns its name.
func (e *Env) Namespace() string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ID}}
	e.Create(ns)
	return ns.Name
}
