package simulate

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stowage-dev/stowage/controller/simulate/report"
)

// waitsOf runs the scenario with Stowage and returns why its pods waited.
func waitsOf(t *testing.T, doc string) []report.Wait {
	t.Helper()
	s, err := ReadScenario(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(t.Context(), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep.Systems[0].Waits
}

func TestACalmRunHasNoWaitToExplain(t *testing.T) {
	if ws := waitsOf(t, calm); len(ws) != 0 {
		t.Errorf("waits %+v, want none", ws)
	}
}

// TestANodeClassThatSelectsNoSubnetIsNamedWithItsCondition: nothing can
// launch, and the summary says which NodeClass and why.
func TestANodeClassThatSelectsNoSubnetIsNamedWithItsCondition(t *testing.T) {
	doc := strings.Replace(calm, "subnetSelectorTerms: [{tags: {stowage.dev/discovery: calm}}]", "subnetSelectorTerms: [{tags: {stowage.dev/discovery: nowhere}}]", 1)
	s, err := ReadScenario(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(t.Context(), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ws := rep.Systems[0].Waits
	if len(ws) != 1 || ws[0].Kind != report.WaitNodeClassNotReady || ws[0].Pods != 6 || ws[0].NeverRan != 6 ||
		!strings.Contains(ws[0].Reason, "NodeClass web is not Ready: ResolutionFailed") || !strings.Contains(ws[0].Reason, "subnet") {
		t.Fatalf("waits %+v, want the 6 pods held by NodeClass web's Ready condition", ws)
	}
	var text bytes.Buffer
	if err := report.WriteText(&text, rep); err != nil {
		t.Fatal(err)
	}
	if out := text.String(); !strings.Contains(out, "Why pods waited, stowage (6 pods") || !strings.Contains(out, "NodeClass web is not Ready") {
		t.Errorf("the summary does not say why:\n%s", out)
	}
}

func TestPodsOverAPoolsLimitWaitForIt(t *testing.T) {
	ws := waitsOf(t, strings.Replace(calm, "count: 6}", "count: 20}", 1))
	if len(ws) == 0 || ws[0].Kind != report.WaitPoolLimit || !strings.Contains(ws[0].Reason, "nodepool web is at its limits") {
		t.Errorf("waits %+v, want pods held by nodepool web's limit", ws)
	}
}

func TestPodsWhoseOfferingsAreShortWaitForThem(t *testing.T) {
	doc := strings.Replace(calm, "  seed: 11\n", `  seed: 11
  capacity:
    - {instanceType: c6i.xlarge, zone: us-east-1a, capacityType: on-demand, available: 0}
    - {instanceType: c6i.xlarge, zone: us-east-1b, capacityType: on-demand, available: 0}
    - {instanceType: c6i.xlarge, zone: us-east-1c, capacityType: on-demand, available: 0}
`, 1)
	ws := waitsOf(t, doc)
	if len(ws) == 0 || ws[0].Kind != report.WaitShortage || ws[0].Pods != 6 {
		t.Errorf("waits %+v, want the 6 pods held by the shortage", ws)
	}
}

// TestPodsOverALimitADrainHoldsBackSayWhichDrain: the pool's two nodes
// expire, its limit leaves no room for their replacements, and a PDB that
// allows no disruption refuses their drain: the pod added then waits for the
// room that drain would free.
func TestPodsOverALimitADrainHoldsBackSayWhichDrain(t *testing.T) {
	doc := strings.NewReplacer("duration: 20m", "duration: 40m", "count: 6}, {at: 15m, count: 0}", "count: 6}, {at: 25m, count: 7}",
		`limits: {cpu: "16"}`, `limits: {cpu: "8"}`,
		"  template:\n    spec:\n      nodeClassRef", "  template:\n    spec:\n      expireAfter: 10m\n      nodeClassRef").Replace(calm) + `---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: default}
spec:
  minAvailable: 6
  selector: {matchLabels: {app: web}}
`
	ws := waitsOf(t, doc)
	if len(ws) != 1 || ws[0].Kind != report.WaitDrainHeld || ws[0].Pods != 1 ||
		!strings.Contains(ws[0].Reason, "nodepool web is at its limits, and the drain of node") || !strings.Contains(ws[0].Reason, "disruption budget") {
		t.Errorf("waits %+v, want the pod added at 25m held by the drain the PDB holds", ws)
	}
}

// TestPodsABoundedSolveLeftWaitForIt: a solve bounded to one pod leaves the
// rest of 400 pods for later batches, one a batch, and the pods that waited
// longest say so.
func TestPodsABoundedSolveLeftWaitForIt(t *testing.T) {
	doc := strings.Replace(calm, "  seed: 11\n", "  seed: 11\n  solveBoundPods: 1\n", 1)
	doc = strings.Replace(doc, "count: 6}", "count: 400}", 1)
	doc = strings.Replace(doc, `limits: {cpu: "16"}`, `limits: {cpu: "64"}`, 1)
	doc = strings.Replace(doc, `{cpu: "1", memory: 1Gi}`, `{cpu: 100m, memory: 128Mi}`, 1)
	ws := waitsOf(t, doc)
	if len(ws) == 0 || ws[0].Kind != report.WaitSolveBound || !strings.Contains(ws[0].Reason, "time bound") {
		t.Fatalf("waits %+v, want the solve's bound first", ws)
	}
}
