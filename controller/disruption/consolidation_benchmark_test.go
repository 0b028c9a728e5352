package disruption_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/disruption"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler/schedulertest"
)

// benchType is every node's instance type: C2's m-16x (16 vCPU, 64 GiB).
const benchType = "m-16x-amd64-linux"

// benchFleets are the fleet sizes measured, in nodes, each carrying ten pods
// a node: 2,000 (make bench) and the scale envelope's 10,000 and 30,000
// (make soak).
var benchFleets = []int{2000, 10000, 30000}

// thinFleet is the benchmark's cluster of n nodes, written down so that
// anyone can build it again:
//   - the pods are schedulertest.W1(10n), the public W1 population (its
//     sizes, labels, zone spreads and zone self-affinity), except that the
//     hostname groups (spread and anti-affinity) lose their constraint: W1's
//     2n pods that each need a node of their own cannot share n nodes;
//   - the nodes are n spot m-16x of catalogue C2, node i in zone
//     test-zone-<a+i%4>, each with a Ready NodeClaim of one pool that allows
//     every C2 type, spot and on-demand, with a budget of 100%;
//   - pod j runs on node j%n: ten pods a node, about 42% of its CPU and 20%
//     of its memory in use, every W1 constraint group spread over every zone.
func thinFleet(n int) (*scheduler.Snapshot, []*corev1.Pod) {
	pods := schedulertest.W1(10 * n)
	for _, p := range pods {
		if p.Spec.Affinity != nil && p.Spec.Affinity.PodAntiAffinity != nil {
			p.Spec.Affinity = nil
		}
		if len(p.Spec.TopologySpreadConstraints) > 0 && p.Spec.TopologySpreadConstraints[0].TopologyKey == corev1.LabelHostname {
			p.Spec.TopologySpreadConstraints = nil
		}
	}
	types := schedulertest.C2()
	it := typeNamed(types, benchType)
	np := schedulertest.DefaultNodePool()
	np.Spec.Disruption = v1alpha1.Disruption{Budgets: []v1alpha1.Budget{{Nodes: "100%"}}}
	snap := schedulertest.Snapshot(nil, types)
	snap.NodePools = []*v1alpha1.NodePool{np}
	zones := []string{"test-zone-a", "test-zone-b", "test-zone-c", "test-zone-d"}
	ready := metav1.NewTime(epoch.Add(-time.Hour))
	for i := range n {
		name := fmt.Sprintf("node-%05d", i)
		labels := it.Requirements.Labels()
		labels[corev1.LabelTopologyZone], labels[v1alpha1.LabelCapacityType] = zones[i%4], v1alpha1.CapacityTypeSpot
		labels[corev1.LabelHostname], labels[v1alpha1.LabelNodePool] = name, np.Name
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec: corev1.NodeSpec{ProviderID: "fake:///" + name},
			Status: corev1.NodeStatus{Allocatable: it.Allocatable().List(), Capacity: it.Capacity.List(),
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: ready}}}}
		claim := &v1alpha1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1alpha1.LabelNodePool: np.Name}}}
		claim.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionInitialized, Status: metav1.ConditionTrue, LastTransitionTime: ready}}
		snap.Nodes = append(snap.Nodes, &scheduler.StateNode{Node: node, NodeClaim: claim})
	}
	for j, p := range pods {
		sn := snap.Nodes[j%n]
		p.Spec.NodeName = sn.Node.Name
		p.Status.Phase = corev1.PodRunning
		sn.Pods = append(sn.Pods, p)
	}
	return snap, pods
}

// BenchmarkConsolidation measures, per fleet size, one full consolidation
// decision (every method in order, as a controller round tries them) over
// thinFleet, on one core, then executes its commands on the snapshot and
// compares the fleet's cost with a from-scratch solve for the same pods.
func BenchmarkConsolidation(b *testing.B) {
	for _, n := range benchFleets {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) { benchConsolidation(b, n) })
	}
}

func benchConsolidation(b *testing.B, n int) {
	snap, pods := thinFleet(n)
	scratchStart := cpuSeconds(b)
	scratch := scheduler.Solve(schedulertest.Snapshot(unbound(pods), schedulertest.C2()), scheduler.Options{}).TotalPrice()
	scratchCPU := cpuSeconds(b) - scratchStart
	before := disruption.FleetCosts(snap)[schedulertest.DefaultPoolName]
	for range b.N {
		start := cpuSeconds(b)
		cmds := decideAll(b, snap)
		cpu := cpuSeconds(b) - start
		after := before
		var savings float64
		for _, cmd := range cmds {
			savings += cmd.Savings
			after -= cmd.Savings
		}
		ratio := after / scratch
		if ratio > 1.1 {
			b.Errorf("the fleet costs %.2f $/h after the commands, %.3f times a from-scratch solve's %.2f: want within 1.1", after, ratio, scratch)
			continue
		}
		fmt.Printf("BENCH disruption=consolidation nodes=%d pods=%d cpu_seconds=%.3f commands=%d savings_per_hour=%.2f cost_ratio_after=%.3f cost_before=%.2f cost_after=%.2f cost_scratch=%.2f scratch_cpu_seconds=%.3f\n",
			n, len(pods), cpu, len(cmds), savings, ratio, before, after, scratch, scratchCPU)
	}
}

// decideAll runs the methods in the controller's order and returns the
// first one's commands.
func decideAll(b *testing.B, snap *scheduler.Snapshot) []disruption.Command {
	r := disruption.Round{Snapshot: snap, Now: epoch, Pools: disruption.DefaultedPools(snap.NodePools)}
	candidates := disruption.NewCandidates(&r)
	for _, m := range disruption.NewMethods(disruption.ConsolidationOptions{}) {
		d, err := disruption.Decide(context.Background(), m, r, candidates)
		if err != nil {
			b.Fatal(err)
		}
		if len(d.Commands) > 0 {
			return d.Commands
		}
	}
	return nil
}

func unbound(pods []*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		c := *p
		c.Spec.NodeName, c.Status.Phase = "", corev1.PodPending
		out[i] = &c
	}
	return out
}

func cpuSeconds(tb testing.TB) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}
