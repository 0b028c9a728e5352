package disruption

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler/schedulertest"
)

// The worked example of docs/guides/disruption.md#balanced: the fleet as the
// page describes it, each move scored by the code and compared with the
// page's table, figure by figure, at the precision the page prints.
const exampleZone = "us-east-1a"

var examplePrices = map[string]float64{"m7i.large": 0.1008, "m7i.xlarge": 0.2016, "m7i.2xlarge": 0.4032}

// exampleNode is one row of the page's fleet.
type exampleNode struct {
	name, instanceType string
	pods               int
	started            time.Duration // ago
	annotations        map[string]string
	priority           *int32
	app                string
}

func exampleFleet() []exampleNode {
	fleet := []exampleNode{
		{name: "a", instanceType: "m7i.2xlarge", pods: 2, started: 12 * time.Hour},
		{name: "b", instanceType: "m7i.2xlarge", pods: 3, started: 12 * time.Hour,
			annotations: map[string]string{corev1.PodDeletionCost: "1073741824"}},
		{name: "c", instanceType: "m7i.xlarge", pods: 3, started: time.Hour, app: "checkout"},
		{name: "d", instanceType: "m7i.xlarge", pods: 4, started: 48 * time.Hour},
		{name: "e", instanceType: "m7i.xlarge", pods: 4, started: 48 * time.Hour, priority: ptr.To[int32](1000000000)},
	}
	for _, n := range "fghij" {
		fleet = append(fleet, exampleNode{name: string(n), instanceType: "m7i.xlarge", pods: 4, started: 48 * time.Hour})
	}
	return fleet
}

// exampleRound builds the fleet of pool web at now.
func exampleRound(now time.Time) *Round {
	var types []*cloudprovider.InstanceType
	for name, price := range examplePrices {
		types = append(types, schedulertest.NewInstanceType(name, 4, 16<<30, 58, cloudprovider.Offerings{
			{Zone: exampleZone, CapacityType: v1alpha1.CapacityTypeOnDemand, Price: price, Available: true}}))
	}
	pool := &v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	pool.Spec.Disruption.ConsolidationPolicy = v1alpha1.ConsolidationPolicyBalanced
	snap := &scheduler.Snapshot{NodePools: []*v1alpha1.NodePool{pool}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"web": types}}
	for _, n := range exampleFleet() {
		snap.Nodes = append(snap.Nodes, exampleStateNode(n, now))
	}
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "checkout", Namespace: "default"},
		Spec:   policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "checkout"}}},
		Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1}}
	return &Round{Snapshot: snap, Now: now, Pools: DefaultedPools(snap.NodePools), PDBs: []*policyv1.PodDisruptionBudget{pdb}}
}

func exampleStateNode(n exampleNode, now time.Time) *scheduler.StateNode {
	labels := map[string]string{v1alpha1.LabelNodePool: "web", corev1.LabelInstanceTypeStable: n.instanceType,
		corev1.LabelTopologyZone: exampleZone, v1alpha1.LabelCapacityType: v1alpha1.CapacityTypeOnDemand}
	claim := &v1alpha1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: labels}}
	claim.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionInitialized, Status: metav1.ConditionTrue}}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: labels},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	sn := &scheduler.StateNode{Node: node, NodeClaim: claim}
	for i := range n.pods {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", n.name, i), Namespace: "default",
			Annotations: n.annotations, Labels: map[string]string{"app": n.app}},
			Spec:   corev1.PodSpec{NodeName: n.name, Priority: n.priority},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: ptr.To(metav1.NewTime(now.Add(-n.started)))}}
		sn.Pods = append(sn.Pods, p)
	}
	return sn
}

// exampleMoves reads the page's table of moves: the rows after the marker.
func exampleMoves(t *testing.T) [][]string {
	t.Helper()
	page, err := os.ReadFile("../../docs/guides/disruption.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(page), "<!-- balanced-example:")
	if !ok {
		t.Fatal("docs/guides/disruption.md has no balanced-example table")
	}
	var rows [][]string
	for i, line := range strings.Split(table, "\n")[1:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		if i < 2 {
			continue // header and rule
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(line, "|"), "|") {
			cells = append(cells, strings.TrimSpace(c))
		}
		rows = append(rows, cells)
	}
	if len(rows) == 0 {
		t.Fatal("the balanced-example table has no rows")
	}
	return rows
}

// exampleCommand is the move a row names: "`a` replaced by an m7i.large" or
// "`d` deleted, ...".
func exampleCommand(t *testing.T, r *Round, move string) Command {
	t.Helper()
	name := strings.Trim(strings.Fields(move)[0], "`")
	var cmd Command
	for _, c := range NewCandidates(r) {
		if c.Name() == name {
			cmd.Candidates = []*Candidate{c}
		}
	}
	if cmd.Candidates == nil {
		t.Fatalf("move %q: no node %s", move, name)
	}
	if _, it, ok := strings.Cut(move, "replaced by an "); ok {
		price, known := examplePrices[it]
		if !known {
			t.Fatalf("move %q: no price for %s", move, it)
		}
		cmd.Replacements = []*scheduler.NewNodeClaim{{NodePool: "web", Offering: cloudprovider.Offering{Price: price}}}
	}
	return cmd
}

func TestBalancedWorkedExample(t *testing.T) {
	now := time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)
	r := exampleRound(now)
	totals := r.poolTotals("web")
	if got := fmt.Sprintf("%.4f %.3f", totals.cost, totals.disruption); got != "2.4192 139.625" {
		t.Errorf("pool cost and disruption %s, the page says 2.4192 139.625", got)
	}
	for _, row := range exampleMoves(t) {
		if len(row) != 7 {
			t.Fatalf("row %q: want 7 cells", row)
		}
		scores := r.balancedScores(exampleCommand(t, r, row[0]))
		if len(scores) != 1 {
			t.Fatalf("%s: %d scores, want one for pool web", row[0], len(scores))
		}
		s := scores[0]
		verdict := DecisionRejected
		if s.Approved() {
			verdict = DecisionApproved
		}
		got := []string{fmt.Sprintf("%.4f", s.Savings), fmt.Sprintf("%.2f%%", 100*s.Savings/s.PoolCost),
			strconv.FormatFloat(math.Round(s.Disruption*1e4)/1e4, 'f', -1, 64), fmt.Sprintf("%.2f%%", 100*s.Disruption/s.PoolDisruption),
			fmt.Sprintf("%.2f", s.Score()), verdict}
		if want := row[1:]; strings.Join(got, " | ") != strings.Join(want, " | ") {
			t.Errorf("%s:\n code %s\n page %s", row[0], strings.Join(got, " | "), strings.Join(want, " | "))
		}
	}
}
