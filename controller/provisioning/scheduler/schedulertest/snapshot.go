package schedulertest

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// DefaultPoolName names the benchmarks' single NodePool and its NodeClass.
const DefaultPoolName = "default"

// DefaultNodePool is a pool with no requirements, taints or limits.
func DefaultNodePool() *v1alpha1.NodePool {
	return &v1alpha1.NodePool{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "NodePool"},
		ObjectMeta: metav1.ObjectMeta{Name: DefaultPoolName},
		Spec: v1alpha1.NodePoolSpec{Template: v1alpha1.NodeClaimTemplate{Spec: v1alpha1.NodeClaimTemplateSpec{
			NodeClassRef: &v1alpha1.NodeClassReference{Group: v1alpha1.Group, Kind: "NodeClass", Name: DefaultPoolName},
		}}},
	}
}

// DefaultNodeClass is the NodeClass DefaultNodePool refers to.
func DefaultNodeClass() *v1alpha1.NodeClass {
	return &v1alpha1.NodeClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "NodeClass"},
		ObjectMeta: metav1.ObjectMeta{Name: DefaultPoolName},
		Spec: v1alpha1.NodeClassSpec{
			AMISelectorTerms:           []v1alpha1.AMISelectorTerm{{Alias: "al2023@latest"}},
			SubnetSelectorTerms:        []v1alpha1.SelectorTerm{{Tags: map[string]string{"stowage.dev/discovery": "bench"}}},
			SecurityGroupSelectorTerms: []v1alpha1.SecurityGroupSelectorTerm{{Tags: map[string]string{"stowage.dev/discovery": "bench"}}},
			Role:                       "StowageNodeRole",
		},
	}
}

// Snapshot is pending pods, the default pool offering types, no nodes and no DaemonSets.
func Snapshot(pods []*corev1.Pod, types []*cloudprovider.InstanceType) *scheduler.Snapshot {
	return &scheduler.Snapshot{
		Pods:          pods,
		NodePools:     []*v1alpha1.NodePool{DefaultNodePool()},
		NodeClasses:   map[string]*v1alpha1.NodeClass{DefaultPoolName: DefaultNodeClass()},
		InstanceTypes: map[string][]*cloudprovider.InstanceType{DefaultPoolName: types},
	}
}
