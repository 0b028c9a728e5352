package simulate_test

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stowage-dev/stowage/controller/simulate"
	"github.com/stowage-dev/stowage/controller/simulate/report"
)

func readScenario(t testing.TB, path string) *simulate.Scenario {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := simulate.ReadScenario(f)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return s
}

func run(t testing.TB, s *simulate.Scenario, compare bool) *report.Report {
	t.Helper()
	r, err := simulate.Run(t.Context(), s, simulate.Options{CompareCAS: compare})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func system(t testing.TB, r *report.Report, name string) report.System {
	t.Helper()
	for _, s := range r.Systems {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no system %s in the report", name)
	return report.System{}
}

func TestShortageForcesTheFallbackType(t *testing.T) {
	r := run(t, readScenario(t, "testdata/gpu-shortage.yaml"), true)
	stowage := system(t, r, simulate.SystemStowage)
	if len(stowage.Fallbacks) == 0 {
		t.Fatal("stowage took no fallback")
	}
	for _, f := range stowage.Fallbacks {
		if f.Short.InstanceType != "g5.12xlarge" || f.Chosen.InstanceType != "g5.24xlarge" {
			t.Errorf("fallback %s -> %s, want g5.12xlarge -> g5.24xlarge", f.Short, f.Chosen)
		}
	}
	if got := stowage.Series.NodesByInstanceType["g5.12xlarge"]; slices.Max(append(got, 0)) != 0 {
		t.Errorf("stowage ran a g5.12xlarge node, which has no capacity: %v", got)
	}
	if tier := stowage.Tiers[0]; tier.PodsStarted != 1 || tier.TimeToRunning.P99 > 5*time.Minute {
		t.Errorf("stowage's vllm pod: %+v, want it running within 5 minutes", tier)
	}
	cas := system(t, r, simulate.SystemClusterAutoscaler)
	if tier := cas.Tiers[0]; tier.PodsStarted != 0 || tier.PodsNeverRan != 1 {
		t.Errorf("cluster-autoscaler's vllm pod: %+v, want it never to run: its only type has no capacity", tier)
	}
	for _, f := range cas.Fallbacks {
		if f.Chosen != (report.Offering{}) {
			t.Errorf("the node group fell back to %s; it has no other type", f.Chosen)
		}
	}
}

func TestNodeGroupBacksOffAsClusterAutoscalerDoes(t *testing.T) {
	r := run(t, readScenario(t, "testdata/gpu-shortage.yaml"), true)
	cas := system(t, r, simulate.SystemClusterAutoscaler)
	// The scale-up fails at the first scan; CA's defaults then back the group
	// off 5, 10 and 20 minutes: retries at 0, 5 and 15 minutes in a 30-minute run.
	var attempts []time.Duration
	for _, f := range cas.Fallbacks {
		at := f.At.Sub(r.Start)
		if len(attempts) == 0 || at-attempts[len(attempts)-1] > time.Minute {
			attempts = append(attempts, at)
		}
	}
	want := []time.Duration{0, 5 * time.Minute, 15 * time.Minute}
	if len(attempts) != len(want) {
		t.Fatalf("scale-up attempts at %v, want %v", attempts, want)
	}
	for i := range want {
		if d := attempts[i] - want[i]; d < 0 || d > 20*time.Second {
			t.Errorf("attempt %d at %s, want %s (within one scan)", i, attempts[i], want[i])
		}
	}
}

func TestScaleUpAndDownLaunchesTheExpectedNodesAndReturnsToNone(t *testing.T) {
	r := run(t, readScenario(t, "testdata/scale-up-down.yaml"), false)
	stowage := system(t, r, simulate.SystemStowage)
	nodes := stowage.Series.NodesTotal()
	if peak := slices.Max(nodes); peak != 10 {
		t.Errorf("peak nodes %d, want 10 (30 pods, 3 per c6i.xlarge)", peak)
	}
	// The pods go at 40 minutes; empty nodes go after consolidateAfter (1m).
	if last := nodes[len(nodes)-1]; last != 0 {
		t.Errorf("%d nodes at the end, want none: %v", last, nodes)
	}
	if stowage.NodesLaunched != 10 || stowage.NodesTerminated != 10 {
		t.Errorf("launched %d, terminated %d; want 10 and 10", stowage.NodesLaunched, stowage.NodesTerminated)
	}
	if tier := stowage.Tiers[0]; tier.PodsStarted != 30 || tier.PodsNeverRan != 0 {
		t.Errorf("web: %+v, want 30 pods started", tier)
	}
}

func TestSameSeedSameReport(t *testing.T) {
	s := readScenario(t, "../../examples/scenarios/2am-spike.yaml")
	s.Spec.Duration.Duration = 150 * time.Minute
	var outs [2]bytes.Buffer
	for i := range outs {
		if err := report.WriteJSON(&outs[i], run(t, s, true)); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(outs[0].Bytes(), outs[1].Bytes()) {
		t.Fatal("two runs with the same scenario and seed gave different reports")
	}
	seed := int64(99)
	other, err := simulate.Run(t.Context(), s, simulate.Options{Seed: &seed, CompareCAS: true})
	if err != nil {
		t.Fatal(err)
	}
	var third bytes.Buffer
	if err := report.WriteJSON(&third, other); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(outs[0].Bytes(), third.Bytes()) {
		t.Error("another seed gave the same report: the seed drives nothing")
	}
}

func TestBadScenariosNameTheField(t *testing.T) {
	base, err := os.ReadFile("testdata/scale-up-down.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, from, to, want string
	}{
		{"no duration", "duration: 90m", "duration: 0s", "line 9: Scenario scale-up-down: spec.duration: must be positive"},
		{"unknown field", "seed: 3", "seed: 3\n  speed: 3", `line 11: Scenario scale-up-down: spec.speed: unknown field "speed"`},
		{"unknown deployment", "- deployment: web", "- deployment: api", `line 12: Scenario scale-up-down: spec.workloads[0].deployment: no Deployment "api"`},
		{"points out of order", "- {at: 40m, count: 0}", "- {at: 5m, count: 0}", "line 16: Scenario scale-up-down: spec.workloads[0].replicas[2].at"},
		{"bad capacity type", "instanceType: c6i.xlarge, zones", "instanceType: c6i.xlarge, capacityType: cheap, zones", "line 19: Scenario scale-up-down: spec.clusterAutoscaler.nodeGroups[0].capacityType"},
		{"bad node pool", "operator: In, values: [c6i.xlarge]", "operator: Gt, values: [c6i.xlarge]", "line 40: NodePool web: spec.template.spec.requirements[0].values"},
		{"unknown kind", "kind: Deployment", "kind: StatefulSet", `line 47: StatefulSet default/web: kind: kind "StatefulSet" is not part of a scenario`},
		{"foreign apiVersion", "apiVersion: apps/v1", "apiVersion: apps/v1beta1", `line 46: Deployment default/web: apiVersion: "apps/v1beta1" is not the apiVersion of Deployment: use apps/v1`},
		{"negative request", `requests: {cpu: "1", memory: 2Gi}`, `requests: {cpu: "-1", memory: 2Gi}`,
			`line 60: Deployment default/web: spec.template.spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0`},
		{"malformed quantity", `requests: {cpu: "1", memory: 2Gi}`, `requests: {cpu: "1", memory: 2 GB}`,
			`line 60: Deployment default/web: spec.template.spec.containers[0].resources.requests[memory]: "2 GB" is not a quantity`},
		{"workload without a namespace is in default", "kind: Deployment\nmetadata:\n  name: web\n  namespace: default\n",
			"kind: Deployment\nmetadata:\n  name: web\n  namespace: default\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n",
			"Deployment default/web is already on line 46"},
		{"syntax error", "  seed: 3", "  seed: [3", "line 10: YAML syntax"},
		{"block without an end", "  seed: 3", "  seed: 3\n  capacityReservations:\n    - {type: capacity-block, instanceType: g5.12xlarge, zone: us-east-1a, count: 2, start: 1h}",
			"line 12: Scenario scale-up-down: spec.capacityReservations[0].end: a capacity block needs an end after its start"},
		{"reservation in another zone", "  seed: 3", "  seed: 3\n  capacityReservations:\n    - {instanceType: g5.12xlarge, zone: eu-west-1a, count: 2}",
			`spec.capacityReservations[0].zone: "eu-west-1a" is not one of the scenario's zones`},
		{"reservation type", "  seed: 3", "  seed: 3\n  capacityReservations:\n    - {type: spot-block, instanceType: g5.12xlarge, zone: us-east-1a, count: 2}",
			`spec.capacityReservations[0].type: "spot-block": use default or capacity-block`},
		{"future-dated reservation", "  seed: 3", "  seed: 3\n  capacityReservations:\n    - {instanceType: g5.12xlarge, zone: us-east-1a, count: 1, start: 1h}",
			"spec.capacityReservations[0].start: a default reservation is active from the run's start"},
		{"reservation field", "  seed: 3", "  seed: 3\n  capacityReservations:\n    - {instanceType: g5.12xlarge, zone: us-east-1a, count: 1, size: 2}",
			`spec.capacityReservations[0].size: unknown field "size"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := strings.Replace(string(base), tc.from, tc.to, 1)
			if doc == string(base) {
				t.Fatalf("the case changes nothing: %q not found", tc.from)
			}
			_, err := simulate.ReadScenario(strings.NewReader(doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestSpotInterruptionLosesNoPod(t *testing.T) {
	r := run(t, readScenario(t, "testdata/spot-interruption.yaml"), true)
	stowage := system(t, r, simulate.SystemStowage)
	if len(stowage.Interruptions) != 1 {
		t.Fatalf("interruptions %+v, want the scripted one", stowage.Interruptions)
	}
	in := stowage.Interruptions[0]
	if in.PodsLost != 0 {
		t.Errorf("%d pods lost: the interrupted node's pods must be drained before the instance goes", in.PodsLost)
	}
	if d, ok := in.NoticeToReady(); !ok || d > 2*time.Minute+30*time.Second {
		t.Errorf("replacement Ready %v after the notice (ok %v), want within the 2-minute warning and a boot", d, ok)
	}
	if pending := stowage.Series.PendingTotal(); pending[len(pending)-1] != 0 {
		t.Errorf("%d pods pending at the end", pending[len(pending)-1])
	}
	// The baseline has no interruption handling: the pods die with the instance.
	if cas := system(t, r, simulate.SystemClusterAutoscaler); len(cas.Interruptions) != 1 || cas.Interruptions[0].PodsLost == 0 {
		t.Errorf("cluster-autoscaler interruptions %+v, want one that lost its pods", cas.Interruptions)
	}
}

func TestDaemonSetsTakeTheirShareOfEveryNode(t *testing.T) {
	base, err := os.ReadFile("testdata/scale-up-down.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// A DaemonSet asking 1 CPU leaves room for two 1-CPU pods on a c6i.xlarge
	// (3.92 CPU allocatable): 30 pods need 15 nodes instead of 10.
	doc := string(base) + `
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: node-agent
  namespace: kube-system
spec:
  selector: {matchLabels: {app: node-agent}}
  template:
    metadata: {labels: {app: node-agent}}
    spec:
      containers:
        - name: agent
          image: registry.example.com/agent:1.0
          resources:
            requests: {cpu: "1", memory: 256Mi}
`
	s, err := simulate.ReadScenario(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	stowage := system(t, run(t, s, false), simulate.SystemStowage)
	if peak := slices.Max(stowage.Series.NodesTotal()); peak != 15 {
		t.Errorf("peak nodes %d, want 15 (30 pods, 2 per c6i.xlarge beside the DaemonSet's pod)", peak)
	}
	if tier := stowage.Tiers[0]; tier.Name != "web" || tier.PodsStarted != 30 {
		t.Errorf("tiers %+v: DaemonSet pods must not count as a workload's", stowage.Tiers)
	}
}

// TestConsolidationEvictsOnlyPodsWithAHome: a scale-in under a zone spread
// (DoNotSchedule) is consolidated without a pod that a consolidation evicts
// waiting for new capacity: kube-scheduler counts no terminating pod in a
// spread, and neither may consolidation's simulation. The first command
// comes once consolidateAfter (30 s) and the validation delay are over, not
// a revisit later, though the pod events controller keeps writing claims.
func TestConsolidationEvictsOnlyPodsWithAHome(t *testing.T) {
	rep, violations, err := simulate.RunChecked(t.Context(), readScenario(t, "testdata/scale-in-spread.yaml"), simulate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cons := system(t, rep, simulate.SystemStowage).Consolidations
	if len(cons) < 5 {
		t.Fatalf("%d consolidations, want the scale-in consolidated", len(cons))
	}
	if first := cons[0].At.Sub(rep.Start); first > 21*time.Minute {
		t.Errorf("the first consolidation at %s, want it by 21m: the scale-in is at 20m, consolidateAfter 30s", first)
	}
	for _, v := range violations {
		t.Errorf("%s", v)
	}
}
