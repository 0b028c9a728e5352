package capacitybuffer

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	autoscalingv1beta1 "github.com/stowage-dev/stowage/controller/apis/autoscaling/v1beta1"
)

// Objects are the objects of a file (a snapshot, a scenario) buffers may
// name; as a Source it serves them as the API server would.
type Objects struct {
	PodTemplates   []*corev1.PodTemplate
	Deployments    []*appsv1.Deployment
	StatefulSets   []*appsv1.StatefulSet
	ReplicaSets    []*appsv1.ReplicaSet
	Jobs           []*batchv1.Job
	ResourceQuotas []*corev1.ResourceQuota
}

// Source serves the objects through an in-memory client, so that a file is
// read as the cluster would be.
func (o Objects) Source() Source {
	var objs []client.Object
	for _, x := range o.PodTemplates {
		objs = append(objs, x)
	}
	for _, x := range o.Deployments {
		objs = append(objs, x)
	}
	for _, x := range o.StatefulSets {
		objs = append(objs, x)
	}
	for _, x := range o.ReplicaSets {
		objs = append(objs, x)
	}
	for _, x := range o.Jobs {
		objs = append(objs, x)
	}
	for _, x := range o.ResourceQuotas {
		objs = append(objs, x)
	}
	return ClientSource{Reader: fake.NewClientBuilder().WithObjects(objs...).Build()}
}

// Book works the buffers of a file out against its objects and returns their
// outcomes, for `stowage schedule` and the simulator's reading of a file.
func Book(ctx context.Context, buffers []*autoscalingv1beta1.CapacityBuffer, objs Objects) ([]Outcome, error) {
	return Plan(ctx, objs.Source(), buffers)
}
