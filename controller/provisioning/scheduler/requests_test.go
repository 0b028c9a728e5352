package scheduler_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// A pod's requests are worked out once while each solve uses them; a solve
// that does not use them forgets them. The pod is changed in place here, as
// the cluster state never does, to tell a remembered answer from a new one.
func TestRequestMemoryKeepsWhatTheLastSolveUsed(t *testing.T) {
	p := pods(1, "web", "500m", "1Gi")[0]
	cpu := func(m *scheduler.RequestMemory) int64 { return m.Of(p).CPU }
	m := (*scheduler.RequestMemory)(nil).Next()
	if got := cpu(m); got != 500 {
		t.Fatalf("first solve: %d millicores, want 500", got)
	}
	p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("2")
	m = m.Next()
	if got := cpu(m); got != 500 {
		t.Errorf("the next solve worked the requests out again (%d millicores), want the remembered 500", got)
	}
	m = m.Next().Next() // a solve that did not use the pod in between
	if got := cpu(m); got != 2000 {
		t.Errorf("after a solve without the pod: %d millicores, want 2000 worked out again", got)
	}
	if got := (*scheduler.RequestMemory)(nil).Of(p).CPU; got != 2000 {
		t.Errorf("no memory: %d millicores, want 2000", got)
	}
}
