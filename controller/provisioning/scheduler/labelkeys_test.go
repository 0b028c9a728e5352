package scheduler_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

func nodeSelector(labels map[string]string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.NodeSelector = labels }
}

// TestKarpenterKeysInAPoolRestrictWhatItLaunches checks that a pool written
// with Karpenter's keys launches what the same pool written with Stowage's
// does, and not the cheapest type of all (spot t3 or t4g).
func TestKarpenterKeysInAPoolRestrictWhatItLaunches(t *testing.T) {
	karpenter := pool("default", require("karpenter.sh/capacity-type", "In", "on-demand"),
		require("karpenter.k8s.aws/instance-family", "In", "c6i"))
	stowage := pool("default", require(v1alpha1.LabelCapacityType, "In", "on-demand"),
		require(v1alpha1.LabelInstanceFamily, "In", "c6i"))
	got := solve(t, snapshot(pods(10, "web", "1", "2Gi"), karpenter), scheduler.Options{})
	want := solve(t, snapshot(pods(10, "web", "1", "2Gi"), stowage), scheduler.Options{})
	if decision(got) != decision(want) {
		t.Errorf("with Karpenter's keys the pool launches\n%s\nwith Stowage's\n%s", decision(got), decision(want))
	}
	for _, nc := range got.NewNodeClaims {
		if nc.Offering.CapacityType != v1alpha1.CapacityTypeOnDemand || nc.InstanceTypes[0].Requirements.Get(v1alpha1.LabelInstanceFamily).Any() != "c6i" {
			t.Errorf("%s launches %s %s; the pool allows on-demand c6i only", nc.Name, nc.Offering.CapacityType, nc.InstanceTypes[0].Name)
		}
	}
}

// TestPodsSelectingKarpenterKeysAreServed checks a nodeSelector, a required
// node affinity and a zone-style spread written with Karpenter's keys: by
// default Stowage's nodes carry those labels, so the pods are placed as if
// written with Stowage's keys (the checker sees the launched node's labels).
func TestPodsSelectingKarpenterKeysAreServed(t *testing.T) {
	selecting := pods(6, "web", "1", "2Gi", nodeSelector(map[string]string{"karpenter.sh/capacity-type": "on-demand", "karpenter.k8s.aws/instance-category": "m"}),
		spread("karpenter.sh/capacity-type", 1))
	r := solve(t, snapshot(selecting, pool("default")), scheduler.Options{})
	if len(r.Unschedulable) != 0 || r.PodCount() != 6 {
		t.Fatalf("placed %d of 6, unschedulable %v", r.PodCount(), r.Unschedulable)
	}
	for _, nc := range r.NewNodeClaims {
		if nc.Offering.CapacityType != v1alpha1.CapacityTypeOnDemand || nc.InstanceTypes[0].Requirements.Get(v1alpha1.LabelInstanceCategory).Any() != "m" {
			t.Errorf("%s launches %s %s for pods selecting on-demand m", nc.Name, nc.Offering.CapacityType, nc.InstanceTypes[0].Name)
		}
	}
}

// TestWithoutKarpenterLabelsPodsSelectingThemWait checks the other setting:
// Stowage's nodes do not carry Karpenter's labels, so a pod selecting on them
// is not one Stowage can serve (kube-scheduler would never bind it there),
// while a node Karpenter launched, which carries them, still takes it.
func TestWithoutKarpenterLabelsPodsSelectingThemWait(t *testing.T) {
	sel := nodeSelector(map[string]string{"karpenter.sh/capacity-type": "on-demand"})
	s := snapshot(pods(2, "web", "1", "2Gi", sel), pool("default"))
	r := scheduler.Solve(s, scheduler.Options{NoKarpenterLabels: true})
	if len(r.NewNodeClaims) != 0 || len(r.Unschedulable) != 2 {
		t.Fatalf("launched %d claims, %d pods unschedulable; want none launched and both unschedulable", len(r.NewNodeClaims), len(r.Unschedulable))
	}
	s.Nodes = []*scheduler.StateNode{karpenterNode("on-demand")}
	r = solve(t, s, scheduler.Options{NoKarpenterLabels: true})
	if len(r.Existing) != 2 || len(r.NewNodeClaims) != 0 {
		t.Errorf("%d pods on the Karpenter node, %d claims; want both pods there", len(r.Existing), len(r.NewNodeClaims))
	}
}

// TestANodeKarpenterLaunchedIsMatchedAsWritten checks that a pod selecting
// Stowage's key is not placed on a node Karpenter launched, which carries
// Karpenter's key only (kube-scheduler would not bind it there), and that the
// pods on such a node count in a spread over either key.
func TestANodeKarpenterLaunchedIsMatchedAsWritten(t *testing.T) {
	s := snapshot(pods(1, "web", "1", "2Gi", nodeSelector(map[string]string{v1alpha1.LabelCapacityType: "spot"})), pool("default"))
	s.Nodes = []*scheduler.StateNode{karpenterNode("spot")}
	r := solve(t, s, scheduler.Options{})
	if len(r.Existing) != 0 || len(r.NewNodeClaims) != 1 {
		t.Errorf("existing placements %+v, %d claims; want the pod on a new node", r.Existing, len(r.NewNodeClaims))
	}
	// Three web pods run on a spot node Karpenter launched; a spread over
	// Stowage's capacity-type key with skew 1 sends the next two to on-demand.
	spreading := pods(5, "web", "500m", "1Gi", spread(v1alpha1.LabelCapacityType, 1))
	node := karpenterNode("spot")
	node.Pods = running("karpenter-node", spreading[:3])
	s = snapshot(spreading[3:], pool("default"))
	s.Nodes = []*scheduler.StateNode{node}
	r = solve(t, s, scheduler.Options{})
	for _, nc := range r.NewNodeClaims {
		if nc.Offering.CapacityType != v1alpha1.CapacityTypeOnDemand {
			t.Errorf("%s launches %s: the spot domain already holds the Karpenter node's 3 pods", nc.Name, nc.Offering.CapacityType)
		}
	}
}

// karpenterNode is a node Karpenter launched: its labels, not Stowage's.
func karpenterNode(capacityType string) *scheduler.StateNode {
	n := existingNode("karpenter-node", "us-east-1a", "4")
	n.Node.Labels = map[string]string{corev1.LabelTopologyZone: "us-east-1a", corev1.LabelHostname: "karpenter-node", corev1.LabelArchStable: "amd64",
		"karpenter.sh/capacity-type": capacityType, "karpenter.sh/nodepool": "default", "karpenter.k8s.aws/instance-family": "m6i"}
	return n
}

// decision summarises the claims: pool, capacity type and first types.
func decision(r *scheduler.Results) string {
	out := ""
	for _, nc := range r.NewNodeClaims {
		out += nc.NodePool + " " + nc.Offering.CapacityType + " " + nc.InstanceTypes[0].Name + "\n"
	}
	return out
}
