package statetest

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// NodeClass is a valid NodeClass selecting its network by discovery tag.
func NodeClass(name string) *v1alpha1.NodeClass {
	tags := map[string]string{"stowage.dev/discovery": "test"}
	return &v1alpha1.NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.NodeClassSpec{
			AMISelectorTerms:           []v1alpha1.AMISelectorTerm{{Alias: "al2023@latest"}},
			SubnetSelectorTerms:        []v1alpha1.SelectorTerm{{Tags: tags}},
			SecurityGroupSelectorTerms: []v1alpha1.SecurityGroupSelectorTerm{{Tags: tags}},
			Role:                       "StowageNodeRole",
		},
	}
}

// NodePool is a pool launching from the named NodeClass with reqs.
func NodePool(name, nodeClass string, reqs ...v1alpha1.NodeSelectorRequirementWithMinValues) *v1alpha1.NodePool {
	return &v1alpha1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.NodePoolSpec{Template: v1alpha1.NodeClaimTemplate{Spec: v1alpha1.NodeClaimTemplateSpec{
			Requirements: reqs,
			NodeClassRef: &v1alpha1.NodeClassReference{Group: v1alpha1.Group, Kind: "NodeClass", Name: nodeClass},
		}}},
	}
}

// Requirement is a pool or claim requirement.
func Requirement(key, operator string, values ...string) v1alpha1.NodeSelectorRequirementWithMinValues {
	return v1alpha1.NodeSelectorRequirementWithMinValues{Key: key, Operator: operator, Values: values}
}

// Node is a ready node with the given provider id, cpu and memory.
func Node(name, providerID, cpu, memory string) *corev1.Node {
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(cpu),
		corev1.ResourceMemory: resource.MustParse(memory),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
		Spec:       corev1.NodeSpec{ProviderID: providerID},
		Status: corev1.NodeStatus{Capacity: res, Allocatable: res,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
	}
}

// Pod is a pod in namespace requesting cpu and memory.
func Pod(namespace, name, cpu, memory string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: "registry.invalid/app:1",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse(cpu),
				corev1.ResourceMemory: resource.MustParse(memory),
			}},
		}}},
	}
}

// Unschedulable marks pod the way kube-scheduler does when no node fits it.
func Unschedulable(pod *corev1.Pod) *corev1.Pod {
	pod.Status.Phase = corev1.PodPending
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: "0/0 nodes are available"}}
	return pod
}

// Create creates each object and then writes its status, which create
// ignores for objects with a status subresource.
func (e *Env) Create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, obj := range objs {
		status := obj.DeepCopyObject().(client.Object)
		if err := e.Client.Create(t.Context(), obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
		status.SetResourceVersion(obj.GetResourceVersion())
		status.SetUID(obj.GetUID())
		if err := e.Client.Status().Update(t.Context(), status); err != nil {
			t.Fatalf("writing the status of %T %s: %v", obj, obj.GetName(), err)
		}
		obj.SetResourceVersion(status.GetResourceVersion())
	}
}
