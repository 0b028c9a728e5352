package scheduler_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// managed gives the node a claim, Initialized or not.
func managed(sn *scheduler.StateNode, initialized bool) *scheduler.StateNode {
	status := metav1.ConditionUnknown
	if initialized {
		status = metav1.ConditionTrue
	}
	sn.NodeClaim = &v1alpha1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: sn.Node.Name + "-claim",
		Labels: map[string]string{v1alpha1.LabelNodePool: "default"}}}
	sn.NodeClaim.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionInitialized, Status: status}}
	return sn
}

func withReady(sn *scheduler.StateNode, status corev1.ConditionStatus, taints ...string) *scheduler.StateNode {
	sn.Node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}
	for _, key := range taints {
		sn.Node.Spec.Taints = append(sn.Node.Spec.Taints, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule})
	}
	return sn
}

// TestSolverPlacesOnlyWhereKubeSchedulerWill is the view of existing nodes
// issue 9 found wrong: after kwok reported nodes NotReady, Stowage kept
// placing pods on them, counting their not-ready taint as one a node sheds
// while it comes up, and kube-scheduler kept rejecting the pods. Those taints,
// and the cordon, are the node's own while it initializes, and real once it
// has been up.
func TestSolverPlacesOnlyWhereKubeSchedulerWill(t *testing.T) {
	cases := []struct {
		name     string
		node     *scheduler.StateNode
		takesPod bool
	}{
		{"an initialized node that went NotReady", withReady(managed(existingNode("n", "us-east-1a", "8"), true),
			corev1.ConditionFalse, corev1.TaintNodeNotReady), false},
		{"an initialized node that is unreachable", withReady(managed(existingNode("n", "us-east-1a", "8"), true),
			corev1.ConditionUnknown, corev1.TaintNodeUnreachable), false},
		{"an unmanaged node that went NotReady", withReady(existingNode("n", "us-east-1a", "8"),
			corev1.ConditionFalse, corev1.TaintNodeNotReady), false},
		{"an initialized node still tainted not-ready", withReady(managed(existingNode("n", "us-east-1a", "8"), true),
			corev1.ConditionTrue, corev1.TaintNodeNotReady), false},
		{"a cordoned initialized node", cordoned(withReady(managed(existingNode("n", "us-east-1a", "8"), true), corev1.ConditionTrue)), false},
		{"a node coming up, NotReady and cordoned until its DaemonSets run", cordoned(withReady(managed(existingNode("n", "us-east-1a", "8"), false),
			corev1.ConditionFalse, corev1.TaintNodeNotReady, corev1.TaintNodeUnschedulable)), true},
		{"a Ready initialized node", withReady(managed(existingNode("n", "us-east-1a", "8"), true), corev1.ConditionTrue), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := snapshot(pods(1, "web", "1", "1Gi"), pool("default"))
			s.Nodes = []*scheduler.StateNode{c.node}
			r := solve(t, s, scheduler.Options{})
			if got := len(r.Existing) == 1; got != c.takesPod {
				t.Errorf("pod placed on the node: %v, want %v (new claims: %d)", got, c.takesPod, len(r.NewNodeClaims))
			}
			if r.PodCount() != 1 {
				t.Errorf("placed %d of 1", r.PodCount())
			}
		})
	}
}

func cordoned(sn *scheduler.StateNode) *scheduler.StateNode {
	sn.Node.Spec.Unschedulable = true
	return sn
}

// TestUnboundDaemonSetPodsKeepTheirRoom: a node whose DaemonSet pods are not
// bound yet has their room taken already, as the new claims the solver makes
// count it; a DaemonSet whose pod is bound, or that does not tolerate the
// node, takes nothing more.
func TestUnboundDaemonSetPodsKeepTheirRoom(t *testing.T) {
	agent := daemonSet("agent", "2", nil)
	gpuOnly := daemonSet("gpu-agent", "2", map[string]string{"example.com/gpu": "true"})
	cases := []struct {
		name     string
		bound    []*corev1.Pod
		cpu      string
		takesPod bool
	}{
		// 9 cpu; the agent takes 2, so 7 are free whether its pod is bound or not.
		{"the agent is not bound yet", nil, "7500m", false},
		{"the agent is bound, and counted once", []*corev1.Pod{daemonPod(agent)}, "6500m", true},
		{"the agent is not bound yet, and counted once", nil, "6500m", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			node := withReady(managed(existingNode("n", "us-east-1a", "9", c.bound...), false), corev1.ConditionTrue)
			s := snapshot(pods(1, "web", c.cpu, "1Gi"), pool("default"))
			s.Nodes, s.DaemonSets = []*scheduler.StateNode{node}, []*appsv1.DaemonSet{agent, gpuOnly}
			r := solve(t, s, scheduler.Options{})
			if got := len(r.Existing) == 1; got != c.takesPod {
				t.Errorf("pod of %s cpu placed on the node: %v, want %v", c.cpu, got, c.takesPod)
			}
		})
	}
}

func daemonSet(name, cpu string, selector map[string]string) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system"},
		Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{NodeSelector: selector,
			Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}}}
}

func daemonPod(ds *appsv1.DaemonSet) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: ds.Name + "-x", Namespace: ds.Namespace,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name, Controller: ptr.To(true)}}},
		Spec: ds.Spec.Template.Spec}
}
