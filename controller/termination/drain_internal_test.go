package termination

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

func pod(name string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func names(pods []*corev1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Name
	}
	return out
}

func TestWaitsForSkipsPodsTheDrainMustNotHoldOn(t *testing.T) {
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	term := &terminator{clk: clocktesting.NewFakeClock(now)}
	pods := []*corev1.Pod{
		pod("app"),
		pod("done", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }),
		pod("failed", func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }),
		pod("daemon", func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "d", Controller: ptr.To(true)}}
		}),
		pod("mirror", func(p *corev1.Pod) { p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"} }),
		pod("tolerant", func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
		}),
		pod("leaving", func(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.NewTime(now.Add(20 * time.Second))) }),
		pod("stuck", func(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.NewTime(now.Add(-2 * time.Minute))) }),
		pod("precious", func(p *corev1.Pod) { p.Annotations = map[string]string{v1alpha1.AnnotationDoNotDisrupt: "true"} }),
	}
	if got, want := names(filter(pods, term.waitsFor)), []string{"app", "leaving", "precious"}; !slices.Equal(got, want) {
		t.Errorf("drain waits for %v, want %v", got, want)
	}
}

func TestToEvictHoldsCriticalPodsAndDoNotDisruptPodsBack(t *testing.T) {
	critical := func(p *corev1.Pod) { p.Spec.PriorityClassName = "system-cluster-critical" }
	leaving := func(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.Now()) }
	karpenter := func(p *corev1.Pod) {
		p.Annotations = map[string]string{v1alpha1.AnnotationKarpenterDoNotDisrupt: "true"}
	}
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	// Started an hour ago and protected for 90 minutes, or for 30.
	forAWhile := func(d string) func(p *corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Status.StartTime = ptr.To(metav1.NewTime(now.Add(-time.Hour)))
			p.Annotations = map[string]string{v1alpha1.AnnotationDoNotDisrupt: d}
		}
	}
	for _, tc := range []struct {
		name    string
		waiting []*corev1.Pod
		want    []string
	}{
		{"regular pods before critical ones", []*corev1.Pod{pod("dns", critical), pod("app"), pod("web")}, []string{"app", "web"}},
		{"critical pods once the rest are gone", []*corev1.Pod{pod("dns", critical), pod("app", leaving)}, []string{}},
		{"critical pods last", []*corev1.Pod{pod("dns", critical)}, []string{"dns"}},
		{"do-not-disrupt pods never", []*corev1.Pod{pod("app", karpenter), pod("web")}, []string{"web"}},
		{"do-not-disrupt for a duration while it lasts", []*corev1.Pod{pod("app", forAWhile("90m")), pod("web")}, []string{"web"}},
		{"do-not-disrupt for a duration once it is over", []*corev1.Pod{pod("app", forAWhile("30m")), pod("web")}, []string{"app", "web"}},
		{"do-not-disrupt with another value protects nothing", []*corev1.Pod{pod("app", forAWhile("yes"))}, []string{"app"}},
	} {
		if got := names(toEvict(tc.waiting, now)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: evicts %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestDeadlineIsDeletionPlusTerminationGracePeriod(t *testing.T) {
	deleted := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	claim := &v1alpha1.NodeClaim{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: ptr.To(metav1.NewTime(deleted))}}
	if got := deadline(claim); got != nil {
		t.Errorf("deadline without a terminationGracePeriod = %v, want none", got)
	}
	claim.Spec.TerminationGracePeriod = &metav1.Duration{Duration: time.Hour}
	if got := deadline(claim); got == nil || !got.Equal(deleted.Add(time.Hour)) {
		t.Errorf("deadline = %v, want %v", got, deleted.Add(time.Hour))
	}
}
