package scenariogen

import (
	"maps"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/simulate"
)

type (
	appsDeployment = appsv1.Deployment
	batchJob       = batchv1.Job
)

// clone deep-copies a scenario, so that a cut changes only the copy.
func clone(s *simulate.Scenario) *simulate.Scenario {
	c := &simulate.Scenario{Name: s.Name, Spec: s.Spec}
	sp := &c.Spec
	sp.Zones = slices.Clone(s.Spec.Zones)
	sp.Workloads = slices.Clone(s.Spec.Workloads)
	for i := range sp.Workloads {
		sp.Workloads[i].Replicas = slices.Clone(sp.Workloads[i].Replicas)
	}
	sp.Capacity = slices.Clone(s.Spec.Capacity)
	sp.Interruptions.Scripted = slices.Clone(s.Spec.Interruptions.Scripted)
	sp.Boot = maps.Clone(s.Spec.Boot)
	if ca := s.Spec.ClusterAutoscaler; ca != nil {
		sp.ClusterAutoscaler = &simulate.ClusterAutoscaler{NodeGroups: slices.Clone(ca.NodeGroups)}
	}
	c.NodePools = deepCopies(s.NodePools, (*v1alpha1.NodePool).DeepCopy)
	c.NodeClasses = deepCopies(s.NodeClasses, (*v1alpha1.NodeClass).DeepCopy)
	c.Deployments = deepCopies(s.Deployments, (*appsv1.Deployment).DeepCopy)
	c.Jobs = deepCopies(s.Jobs, (*batchv1.Job).DeepCopy)
	c.DaemonSets = deepCopies(s.DaemonSets, (*appsv1.DaemonSet).DeepCopy)
	return c
}

func deepCopies[T any](in []*T, copyOf func(*T) *T) []*T {
	out := make([]*T, len(in))
	for i, x := range in {
		out[i] = copyOf(x)
	}
	return out
}

// keyOf is an object's namespace/name, its namespace defaulted.
func keyOf(namespace, name string) string {
	if namespace == "" {
		namespace = "default"
	}
	return namespace + "/" + name
}

// qualified is a workload's reference as namespace/name; empty stays empty.
func qualified(ref string) string {
	if ref == "" || strings.Contains(ref, "/") {
		return ref
	}
	return "default/" + ref
}
