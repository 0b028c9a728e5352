package capacitybuffer_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	autoscalingv1beta1 "github.com/stowage-dev/stowage/controller/apis/autoscaling/v1beta1"
	"github.com/stowage-dev/stowage/controller/capacitybuffer"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

const ns = "inference"

func chunk(cpu string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "vllm"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "vllm", Image: "vllm/vllm-openai:v0.11.0", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), "nvidia.com/gpu": resource.MustParse("4")},
			Limits:   corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("4")}}}}}}
}

func buffer(name string, edit func(*autoscalingv1beta1.CapacityBufferSpec)) *autoscalingv1beta1.CapacityBuffer {
	cb := &autoscalingv1beta1.CapacityBuffer{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Generation: 2}}
	edit(&cb.Spec)
	return cb
}

func fromTemplate(replicas int32) func(*autoscalingv1beta1.CapacityBufferSpec) {
	return func(s *autoscalingv1beta1.CapacityBufferSpec) {
		s.PodTemplateRef, s.Replicas = &autoscalingv1beta1.LocalObjectRef{Name: "vllm"}, ptr.To(replicas)
	}
}

func fromDeployment(edit func(*autoscalingv1beta1.CapacityBufferSpec)) func(*autoscalingv1beta1.CapacityBufferSpec) {
	return func(s *autoscalingv1beta1.CapacityBufferSpec) {
		s.ScalableRef = &autoscalingv1beta1.ScalableRef{APIGroup: "apps", Kind: "Deployment", Name: "vllm"}
		edit(s)
	}
}

func objects(deploymentReplicas int32, quotas ...*corev1.ResourceQuota) capacitybuffer.Objects {
	return capacitybuffer.Objects{
		PodTemplates: []*corev1.PodTemplate{{ObjectMeta: metav1.ObjectMeta{Name: "vllm", Namespace: ns, Generation: 7}, Template: chunk("16")}},
		Deployments: []*appsv1.Deployment{{ObjectMeta: metav1.ObjectMeta{Name: "vllm", Namespace: ns},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To(deploymentReplicas), Template: chunk("8")}}},
		Jobs: []*batchv1.Job{{ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: ns},
			Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](4), Template: chunk("2")}}},
		ResourceQuotas: quotas,
	}
}

func quota(name, key, hard, used string) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:   corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceName(key): resource.MustParse(hard)}},
		Status: corev1.ResourceQuotaStatus{Used: corev1.ResourceList{corev1.ResourceName(key): resource.MustParse(used)}}}
}

// TestReplicasAsClusterAutoscalerReadsThem: replicas and percentage give the
// larger, a percentage rounds up to at least one, limits cap them, limits
// alone give as many chunks as fit, and nothing gives none.
func TestReplicasAsClusterAutoscalerReadsThem(t *testing.T) {
	cases := []struct {
		name     string
		cb       *autoscalingv1beta1.CapacityBuffer
		workload int32
		want     int32
	}{
		{"a template's replicas", buffer("a", fromTemplate(3)), 10, 3},
		{"20% of 10 replicas", buffer("a", fromDeployment(func(s *autoscalingv1beta1.CapacityBufferSpec) { s.Percentage = ptr.To[int32](20) })), 10, 2},
		{"10% of 5 replicas rounds up to 1", buffer("a", fromDeployment(func(s *autoscalingv1beta1.CapacityBufferSpec) { s.Percentage = ptr.To[int32](10) })), 5, 1},
		{"the larger of replicas and percentage", buffer("a", fromDeployment(func(s *autoscalingv1beta1.CapacityBufferSpec) {
			s.Percentage, s.Replicas = ptr.To[int32](20), ptr.To[int32](3)
		})), 10, 3},
		{"limits cap them", buffer("a", fromDeployment(func(s *autoscalingv1beta1.CapacityBufferSpec) {
			s.Replicas, s.Limits = ptr.To[int32](5), corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")}
		})), 10, 2},
		{"limits alone", buffer("a", fromDeployment(func(s *autoscalingv1beta1.CapacityBufferSpec) {
			s.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("36"), corev1.ResourceMemory: resource.MustParse("1Ti")}
		})), 10, 4},
		{"nothing asks for none", buffer("a", fromDeployment(func(*autoscalingv1beta1.CapacityBufferSpec) {})), 10, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := book(t, objects(tc.workload), tc.cb)
			if out[0].Replicas != tc.want || len(out[0].Booking.Pods) != int(tc.want) || !out[0].Ready {
				t.Fatalf("replicas %d with %d virtual pods (ready %v), want %d", out[0].Replicas, len(out[0].Booking.Pods), out[0].Ready, tc.want)
			}
		})
	}
}

// TestVirtualPodsHaveTheChunksShape: a buffer of a Job's template books its
// parallelism in pods of the Job's shape, marked virtual and named after
// the buffer.
func TestVirtualPodsHaveTheChunksShape(t *testing.T) {
	cb := buffer("training", func(s *autoscalingv1beta1.CapacityBufferSpec) {
		s.ScalableRef, s.Percentage = &autoscalingv1beta1.ScalableRef{APIGroup: "batch", Kind: "Job", Name: "train"}, ptr.To[int32](100)
	})
	pods := book(t, objects(1), cb)[0].Booking.Pods
	if len(pods) != 4 {
		t.Fatalf("%d virtual pods, want the Job's parallelism of 4", len(pods))
	}
	for _, p := range pods {
		owner, ok := scheduler.BookedBy(p)
		cpu := p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]
		if !ok || owner != "CapacityBuffer/inference/training" || p.Namespace != ns || p.Labels["app"] != "vllm" || cpu.String() != "2" {
			t.Fatalf("virtual pod %s/%s owned by %q with labels %v, cpu %s", p.Namespace, p.Name, owner, p.Labels, cpu.String())
		}
	}
}

// TestQuotasLimitBuffersInTurn: the namespace's quota leaves 16 GPUs, four
// chunks of 4: two buffers of three share it in name order, the first
// takes three, the second is cut to one, and LimitedByQuotas says by what.
func TestQuotasLimitBuffersInTurn(t *testing.T) {
	gpus := quota("gpus", "requests.nvidia.com/gpu", "20", "4") // 16 left: four chunks
	out := book(t, objects(1, gpus), buffer("a", fromTemplate(3)), buffer("b", fromTemplate(3)))
	if out[0].Replicas != 3 || len(out[0].LimitedBy) != 0 || out[1].Replicas != 1 || out[1].Wanted != 3 ||
		!slices.Equal(out[1].LimitedBy, []string{"gpus (requests.nvidia.com/gpu)"}) {
		t.Fatalf("buffer a: %d limited by %v; b: %d of %d limited by %v", out[0].Replicas, out[0].LimitedBy, out[1].Replicas, out[1].Wanted, out[1].LimitedBy)
	}
	st := capacitybuffer.Status(out[1], nil, metav1.Now())
	c := apimeta.FindStatusCondition(st.Conditions, autoscalingv1beta1.ConditionLimitedByQuotas)
	if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "1 of the 3 chunks") {
		t.Fatalf("LimitedByQuotas %+v", c)
	}
}

// TestStatusAsClusterAutoscalerWritesIt: a resolved template buffer reports
// its PodTemplate, generation and replicas, ReadyForProvisioning; the
// provisioner's word sets Provisioning; a missing template is not ready; a
// buffer of another strategy is left alone.
func TestStatusAsClusterAutoscalerWritesIt(t *testing.T) {
	out := book(t, objects(1), buffer("a", fromTemplate(3)), buffer("missing", func(s *autoscalingv1beta1.CapacityBufferSpec) {
		s.PodTemplateRef, s.Replicas = &autoscalingv1beta1.LocalObjectRef{Name: "nowhere"}, ptr.To[int32](1)
	}), buffer("other", func(s *autoscalingv1beta1.CapacityBufferSpec) {
		s.PodTemplateRef, s.ProvisioningStrategy = &autoscalingv1beta1.LocalObjectRef{Name: "vllm"}, ptr.To("example.com/standby")
	}))
	st := capacitybuffer.Status(out[0], &scheduler.BookingResult{Existing: 1, New: 2}, metav1.Now())
	if st.PodTemplateRef == nil || st.PodTemplateRef.Name != "vllm" || *st.PodTemplateGeneration != 7 || *st.Replicas != 3 ||
		*st.ProvisioningStrategy != autoscalingv1beta1.ActiveCapacity {
		t.Fatalf("status %+v", st)
	}
	expectCondition(t, st, autoscalingv1beta1.ConditionReadyForProvisioning, metav1.ConditionTrue, autoscalingv1beta1.ReasonAttributesSetSuccessfully)
	expectCondition(t, st, autoscalingv1beta1.ConditionProvisioning, metav1.ConditionTrue, capacitybuffer.ReasonScalingUp)
	st = capacitybuffer.Status(out[0], &scheduler.BookingResult{Existing: 1, Unschedulable: 2, Reason: "no pool"}, metav1.Now())
	expectCondition(t, st, autoscalingv1beta1.ConditionProvisioning, metav1.ConditionFalse, capacitybuffer.ReasonCannotFit)
	if out[1].Ready || out[1].Reason != capacitybuffer.ReasonPodTemplateNotFound || len(out[1].Booking.Pods) != 0 {
		t.Fatalf("a buffer of a missing template: %+v", out[1])
	}
	expectCondition(t, capacitybuffer.Status(out[1], nil, metav1.Now()), autoscalingv1beta1.ConditionProvisioning, metav1.ConditionFalse, capacitybuffer.ReasonNotReady)
	if out[2].Ours || len(out[2].Booking.Pods) != 0 {
		t.Fatalf("a buffer of another strategy was taken: %+v", out[2])
	}
}

func expectCondition(t *testing.T, st autoscalingv1beta1.CapacityBufferStatus, typ string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	c := apimeta.FindStatusCondition(st.Conditions, typ)
	if c == nil || c.Status != status || c.Reason != reason || c.ObservedGeneration != 2 {
		t.Fatalf("condition %s: %+v, want %s %s at generation 2", typ, c, status, reason)
	}
}

func book(t *testing.T, objs capacitybuffer.Objects, buffers ...*autoscalingv1beta1.CapacityBuffer) []capacitybuffer.Outcome {
	t.Helper()
	out, err := capacitybuffer.Book(context.Background(), buffers, objs)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
