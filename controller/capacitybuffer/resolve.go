// Package capacitybuffer reads CapacityBuffers (autoscaling.x-k8s.io, the API
// Cluster Autoscaler and Karpenter read) and books their room: each buffer's
// chunks become virtual pods the provisioner places after the real ones
// (scheduler.Booking), so that real pods of that shape start without
// waiting for a node. Its status is written as Cluster Autoscaler writes it:
// status.replicas, podTemplateRef and podTemplateGeneration, and the
// conditions ReadyForProvisioning, LimitedByQuotas and Provisioning.
//
// The core (Plan) is a function of the buffers and what they name, read
// through a Source: the controller reads the cluster, `stowage schedule` a
// snapshot, `stowage simulate` its simulated API server.
package capacitybuffer

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1beta1 "github.com/stowage-dev/stowage/controller/apis/autoscaling/v1beta1"
)

// Source reads the objects buffers name.
type Source interface {
	// PodTemplate returns the named PodTemplate; a NotFound error when absent.
	PodTemplate(ctx context.Context, namespace, name string) (*corev1.PodTemplate, error)
	// Workload returns the pod template and current replicas of a
	// Deployment, StatefulSet, ReplicaSet (group apps) or Job (group batch:
	// its parallelism); a NotFound error when absent.
	Workload(ctx context.Context, namespace string, ref autoscalingv1beta1.ScalableRef) (corev1.PodTemplateSpec, int32, error)
	// ResourceQuotas returns the namespace's ResourceQuotas.
	ResourceQuotas(ctx context.Context, namespace string) ([]corev1.ResourceQuota, error)
}

// resolution is the shape a buffer's chunks take.
type resolution struct {
	template corev1.PodTemplateSpec
	// podTemplate and generation are a podTemplateRef's (empty otherwise).
	podTemplate string
	generation  int64
	// workload is a scalableRef's current replicas, -1 for a podTemplateRef.
	workload int32
}

// errUnsupported is a scalableRef of a kind Stowage does not read.
var errUnsupported = errors.New("unsupported scalableRef kind")

// resolve reads the buffer's chunk shape.
func resolve(ctx context.Context, src Source, cb *autoscalingv1beta1.CapacityBuffer) (resolution, error) {
	switch spec := cb.Spec; {
	case spec.PodTemplateRef != nil && spec.ScalableRef != nil:
		return resolution{}, fmt.Errorf("both podTemplateRef and scalableRef are set; set one")
	case spec.PodTemplateRef != nil:
		pt, err := src.PodTemplate(ctx, cb.Namespace, spec.PodTemplateRef.Name)
		if err != nil {
			return resolution{}, err
		}
		return resolution{template: pt.Template, podTemplate: pt.Name, generation: pt.Generation, workload: -1}, nil
	case spec.ScalableRef != nil:
		tmpl, replicas, err := src.Workload(ctx, cb.Namespace, *spec.ScalableRef)
		if err != nil {
			return resolution{}, err
		}
		return resolution{template: tmpl, workload: replicas}, nil
	}
	return resolution{}, fmt.Errorf("neither podTemplateRef nor scalableRef is set; set one")
}

// ClientSource reads through a controller-runtime client (the manager's
// cache in the controller).
type ClientSource struct{ Reader client.Reader }

// PodTemplate implements Source.
func (s ClientSource) PodTemplate(ctx context.Context, namespace, name string) (*corev1.PodTemplate, error) {
	pt := &corev1.PodTemplate{}
	err := s.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, pt)
	return pt, err
}

// Workload implements Source.
func (s ClientSource) Workload(ctx context.Context, namespace string, ref autoscalingv1beta1.ScalableRef) (corev1.PodTemplateSpec, int32, error) {
	key := client.ObjectKey{Namespace: namespace, Name: ref.Name}
	switch {
	case ref.Kind == autoscalingv1beta1.KindDeployment && isGroup(ref, "apps"):
		d := &appsv1.Deployment{}
		err := s.Reader.Get(ctx, key, d)
		return d.Spec.Template, replicasOr1(d.Spec.Replicas), err
	case ref.Kind == autoscalingv1beta1.KindStatefulSet && isGroup(ref, "apps"):
		ss := &appsv1.StatefulSet{}
		err := s.Reader.Get(ctx, key, ss)
		return ss.Spec.Template, replicasOr1(ss.Spec.Replicas), err
	case ref.Kind == autoscalingv1beta1.KindReplicaSet && isGroup(ref, "apps"):
		rs := &appsv1.ReplicaSet{}
		err := s.Reader.Get(ctx, key, rs)
		return rs.Spec.Template, replicasOr1(rs.Spec.Replicas), err
	case ref.Kind == autoscalingv1beta1.KindJob && isGroup(ref, "batch"):
		j := &batchv1.Job{}
		err := s.Reader.Get(ctx, key, j)
		return j.Spec.Template, replicasOr1(j.Spec.Parallelism), err
	}
	return corev1.PodTemplateSpec{}, 0, fmt.Errorf("%w %s %s: use a Deployment, StatefulSet or ReplicaSet (apps) or a Job (batch)",
		errUnsupported, ref.APIGroup, ref.Kind)
}

// ResourceQuotas implements Source.
func (s ClientSource) ResourceQuotas(ctx context.Context, namespace string) ([]corev1.ResourceQuota, error) {
	list := &corev1.ResourceQuotaList{}
	err := s.Reader.List(ctx, list, client.InNamespace(namespace))
	return list.Items, err
}

// isGroup: the ref's group is group, or empty (Cluster Autoscaler reads an
// empty apiGroup as the workload's usual one).
func isGroup(ref autoscalingv1beta1.ScalableRef, group string) bool {
	return ref.APIGroup == "" || ref.APIGroup == group
}

// replicasOr1 is a workload's replicas as the API server defaults them.
func replicasOr1(n *int32) int32 {
	if n == nil {
		return 1
	}
	return *n
}

// notFound reports whether err is the API's NotFound.
func notFound(err error) bool { return apierrors.IsNotFound(err) }
