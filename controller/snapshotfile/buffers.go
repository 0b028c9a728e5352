package snapshotfile

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	autoscalingv1beta1 "github.com/stowage-dev/stowage/controller/apis/autoscaling/v1beta1"
	"github.com/stowage-dev/stowage/controller/capacitybuffer"
	"github.com/stowage-dev/stowage/controller/manifest"
)

// bufferKinds are the CapacityBuffers and what they may name: a buffer's
// PodTemplate or scalableRef, and the namespace's ResourceQuotas that cap it.
var bufferKinds = map[string]kind{
	"CapacityBuffer": {autoscalingv1beta1.SchemeGroupVersion.String(), true, func(o *Objects, m *manifest.Object) (metav1.Object, error) {
		return decodeInto(&o.CapacityBuffers, m)
	}},
	"PodTemplate": {"v1", true, func(o *Objects, m *manifest.Object) (metav1.Object, error) {
		return decodeInto(&o.BufferObjects.PodTemplates, m)
	}},
	"Deployment": {"apps/v1", true, func(o *Objects, m *manifest.Object) (metav1.Object, error) {
		return decodeInto(&o.BufferObjects.Deployments, m)
	}},
	"StatefulSet": {"apps/v1", true, func(o *Objects, m *manifest.Object) (metav1.Object, error) {
		return decodeInto(&o.BufferObjects.StatefulSets, m)
	}},
	"ReplicaSet": {"apps/v1", true, func(o *Objects, m *manifest.Object) (metav1.Object, error) {
		return decodeInto(&o.BufferObjects.ReplicaSets, m)
	}},
	"Job": {"batch/v1", true, func(o *Objects, m *manifest.Object) (metav1.Object, error) {
		return decodeInto(&o.BufferObjects.Jobs, m)
	}},
	"ResourceQuota": {"v1", true, func(o *Objects, m *manifest.Object) (metav1.Object, error) {
		return decodeInto(&o.BufferObjects.ResourceQuotas, m)
	}},
}

func init() {
	for name, k := range bufferKinds {
		kinds[name] = k
	}
}

// servedAs is the apiVersion a kind is read as: a CapacityBuffer of any
// version the CRD serves (one schema) reads as v1beta1.
func servedAs(kindName, apiVersion string) string {
	if kindName == "CapacityBuffer" && slices.Contains(autoscalingv1beta1.ServedVersions, apiVersion) {
		return autoscalingv1beta1.SchemeGroupVersion.String()
	}
	return apiVersion
}

// Buffers works out the snapshot's CapacityBuffers against the objects they
// name, as the controller does against the cluster.
func (o *Objects) Buffers(ctx context.Context) ([]capacitybuffer.Outcome, error) {
	if len(o.CapacityBuffers) == 0 {
		return nil, nil
	}
	out, err := capacitybuffer.Book(ctx, o.CapacityBuffers, o.BufferObjects)
	if err != nil {
		return nil, fmt.Errorf("capacity buffers: %w", err)
	}
	return out, nil
}

// templated is an object buffers may name and the pod spec it carries.
type templated struct {
	obj  any
	spec *corev1.PodSpec
}

// templates are the pod templates of the objects buffers may name, in
// file order per kind, to check them as pods.
func (o *Objects) templates() []templated {
	var out []templated
	b := &o.BufferObjects
	for _, x := range b.PodTemplates {
		out = append(out, templated{x, &x.Template.Spec})
	}
	for _, x := range b.Deployments {
		out = append(out, templated{x, &x.Spec.Template.Spec})
	}
	for _, x := range b.StatefulSets {
		out = append(out, templated{x, &x.Spec.Template.Spec})
	}
	for _, x := range b.ReplicaSets {
		out = append(out, templated{x, &x.Spec.Template.Spec})
	}
	for _, x := range b.Jobs {
		out = append(out, templated{x, &x.Spec.Template.Spec})
	}
	return out
}
