package scheduling_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stowage-dev/stowage/controller/scheduling"
)

func container(cpu, mem string) corev1.Container {
	return corev1.Container{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}}
}

func TestPodRequests(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	sidecar := container("200m", "100Mi")
	sidecar.RestartPolicy = &always
	cases := []struct {
		name      string
		spec      corev1.PodSpec
		cpu, mem  int64
		extension int64
	}{
		{"containers sum", corev1.PodSpec{Containers: []corev1.Container{container("1", "1Gi"), container("500m", "512Mi")}}, 1500, 1536 << 20, 0},
		{"init larger than containers", corev1.PodSpec{InitContainers: []corev1.Container{container("2", "64Mi")}, Containers: []corev1.Container{container("1", "1Gi")}}, 2000, 1 << 30, 0},
		{"sidecar adds to containers", corev1.PodSpec{InitContainers: []corev1.Container{sidecar}, Containers: []corev1.Container{container("1", "1Gi")}}, 1200, (1 << 30) + (100 << 20), 0},
		{"init after sidecar runs beside it", corev1.PodSpec{InitContainers: []corev1.Container{sidecar, container("3", "64Mi")}, Containers: []corev1.Container{container("1", "1Gi")}}, 3200, (1 << 30) + (100 << 20), 0},
		{"overhead", corev1.PodSpec{Overhead: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}, Containers: []corev1.Container{container("1", "1Gi")}}, 1250, 1 << 30, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := scheduling.PodRequests(&corev1.Pod{Spec: tc.spec})
			if r.CPU != tc.cpu || r.Memory != tc.mem || r.Pods != 1 {
				t.Errorf("got cpu=%d mem=%d pods=%d, want cpu=%d mem=%d pods=1", r.CPU, r.Memory, r.Pods, tc.cpu, tc.mem)
			}
		})
	}
}

func TestResourcesExtended(t *testing.T) {
	a := scheduling.FromList(corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("4"), corev1.ResourceCPU: resource.MustParse("8")})
	b := scheduling.FromList(corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8"), corev1.ResourceCPU: resource.MustParse("48")})
	if !a.Fits(b) {
		t.Fatalf("%v should fit in %v", a, b)
	}
	if got := a.Add(a).Add(a).Exceeding(b); got != "nvidia.com/gpu" {
		t.Errorf("12 GPUs in 8: exceeding = %q, want nvidia.com/gpu", got)
	}
	before := a.Get("nvidia.com/gpu")
	sum := a.Add(scheduling.Resources{})
	sum.Set("nvidia.com/gpu", 99)
	if a.Get("nvidia.com/gpu") != before {
		t.Error("Set on a sum changed the vector it came from")
	}
	if got := b.Sub(a).Get("nvidia.com/gpu"); got != 4 {
		t.Errorf("8-4 GPUs = %d", got)
	}
}
