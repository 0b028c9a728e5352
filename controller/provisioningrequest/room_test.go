package provisioningrequest_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	provreqv1 "github.com/stowage-dev/stowage/controller/apis/autoscaling/v1"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/provisioningrequest"
)

// TestPinKeepsThePodsOwnTerms: a pod pinned to nodes still needs what its
// own terms need (a zone here), read by Kubernetes' own node-affinity
// matcher: only a pinned node of that zone matches.
func TestPinKeepsThePodsOwnTerms(t *testing.T) {
	zoneTerm := corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
		{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"us-east-1a"}}}}
	pod := &corev1.Pod{Spec: corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{zoneTerm}}}}}}
	plain := &corev1.Pod{}
	provisioningrequest.Pin([]*corev1.Pod{pod, plain}, []string{"n1", "n2"})
	node := func(name, zone string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name, corev1.LabelTopologyZone: zone}}}
	}
	for _, c := range []struct {
		pod  *corev1.Pod
		node *corev1.Node
		want bool
	}{
		{pod, node("n1", "us-east-1a"), true},
		{pod, node("n2", "us-east-1b"), false},
		{pod, node("n3", "us-east-1a"), false},
		{plain, node("n2", "us-east-1b"), true},
		{plain, node("n3", "us-east-1a"), false},
	} {
		if got, _ := nodeaffinity.GetRequiredNodeAffinity(c.pod).Match(c.node); got != c.want {
			t.Errorf("pod with %d terms on %s/%s: match %v, want %v", len(c.pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms),
				c.node.Name, c.node.Labels[corev1.LabelTopologyZone], got, c.want)
		}
	}
}

// TestUnboundCountsEveryConsumer: of 4 wanted pods, with one consumer bound,
// one finished, one waiting and one of another request, the room still
// needed is the waiting consumer (as a virtual pod of the request) and one
// pod no consumer has come for.
func TestUnboundCountsEveryConsumer(t *testing.T) {
	pr := &provreqv1.ProvisioningRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "training", Name: "gang"}}
	owner := provisioningrequest.OwnerOf(pr)
	consumer := func(name, request, node string, phase corev1.PodPhase) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "training", UID: types.UID("uid-" + name),
			Annotations: map[string]string{provreqv1.ConsumeAnnotation: request}},
			Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: phase}}
	}
	pods := []corev1.Pod{consumer("a", "gang", "n1", corev1.PodRunning), consumer("b", "gang", "", corev1.PodSucceeded),
		consumer("c", "gang", "", corev1.PodPending), consumer("d", "other", "", corev1.PodPending), {ObjectMeta: metav1.ObjectMeta{Name: "e"}}}
	want := scheduler.VirtualPods(owner, corev1.PodTemplateSpec{}, 4)
	cons := provisioningrequest.ConsumersOf(pr, pods)
	if len(cons.Bound) != 2 || len(cons.Waiting) != 1 {
		t.Fatalf("%d bound and %d waiting consumers, want 2 and 1", len(cons.Bound), len(cons.Waiting))
	}
	unbound := cons.Unbound(owner, want)
	if len(unbound) != 2 || unbound[0].Name != "c" || unbound[0].UID != "" || unbound[1].Name != want[0].Name {
		t.Fatalf("unbound %v, want the waiting consumer c and %s", names(unbound), want[0].Name)
	}
	for _, p := range unbound {
		if by, ok := scheduler.BookedBy(p); !ok || by != owner.String() {
			t.Errorf("unbound pod %s is not the request's virtual pod (booked by %q)", p.Name, by)
		}
	}
}

func names(pods []*corev1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Name
	}
	return out
}
