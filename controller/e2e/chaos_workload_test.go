package e2e_test

import (
	"context"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
)

// drain deletes n of the web pools' Ready claims, drawn at random: their
// nodes are drained and their pods go elsewhere.
func (c *chaos) drain(n int) {
	claims, err := c.b.claims()
	if err != nil {
		c.b.t.Fatal(err)
	}
	var names []string
	for _, nc := range claims {
		if nc.DeletionTimestamp == nil && nodeclaim.IsTrue(&nc, v1alpha1.ConditionReady) && strings.HasPrefix(nc.Labels[v1alpha1.LabelNodePool], "web") {
			names = append(names, nc.Name)
		}
	}
	slices.Sort(names)
	c.rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	for _, name := range names[:min(n, len(names))] {
		nc := &v1alpha1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := c.b.Admin.Delete(context.Background(), nc); client.IgnoreNotFound(err) != nil {
			c.b.t.Fatal(err)
		}
	}
}

// scale sets a Deployment's replicas.
func (b *bed) scale(ns, name string, replicas int32) {
	b.t.Helper()
	patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)))
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := b.Admin.Patch(context.Background(), d, patch); err != nil {
		b.t.Fatalf("scaling %s/%s: %v", ns, name, err)
	}
}

// chaosDeployment runs no pods yet, each asking for requests (also its
// limits), in the chaos namespace.
func chaosDeployment(name string, requests corev1.ResourceList, edit func(*corev1.PodSpec)) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	spec := corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](0),
		Containers: []corev1.Container{{Name: "app", Image: "registry.invalid/" + name + ":1", Resources: corev1.ResourceRequirements{Requests: requests, Limits: requests}}}}
	edit(&spec)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: chaosNS, Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}},
	}
}

// chaosWeb is a web tier: on spot first, or on on-demand only.
func chaosWeb(name string, onDemand bool) *appsv1.Deployment {
	return chaosDeployment(name, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")},
		func(s *corev1.PodSpec) {
			s.NodeSelector = map[string]string{"tier": "web"}
			if onDemand {
				s.NodeSelector[v1alpha1.LabelCapacityType] = v1alpha1.CapacityTypeOnDemand
			}
		})
}

// chaosGPU is the vLLM tier: 4 GPUs a pod, on the tainted GPU pool.
func chaosGPU() *appsv1.Deployment {
	return chaosDeployment("vllm", corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"),
		resourceGPU: resource.MustParse("4")}, func(s *corev1.PodSpec) {
		s.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
	})
}
