package report_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stowage-dev/stowage/controller/simulate/report"
)

// TestAFallbackToAnotherPoolNamesBothPools: the JSON carries both pools of
// a move to another pool and omits them for a fallback within a claim; the
// text names the pool that took the pods.
func TestAFallbackToAnotherPoolNamesBothPools(t *testing.T) {
	r := sampleReport()
	moved := &r.Systems[0].Fallbacks[0]
	moved.Short = report.Offering{InstanceType: "p5.48xlarge", Zone: "us-east-1a", CapacityType: "on-demand"}
	moved.Chosen = report.Offering{InstanceType: "p4d.24xlarge", Zone: "us-east-1a", CapacityType: "on-demand"}
	moved.FromPool, moved.ToPool = "p5", "p4d"

	var d doc
	dec := json.NewDecoder(bytes.NewReader(renderJSON(t, r)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("decoding: %v", err)
	}
	fallbacks := d.Systems[0].Fallbacks
	if got := fallbacks[0]; got.FromPool != "p5" || got.ToPool != "p4d" {
		t.Errorf("pools %q -> %q, want p5 -> p4d", got.FromPool, got.ToPool)
	}
	if got := fallbacks[1]; got.FromPool != "" || got.ToPool != "" {
		t.Errorf("a fallback within a claim has pools %q -> %q, want none", got.FromPool, got.ToPool)
	}
	var text bytes.Buffer
	if err := report.WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	want := "p5.48xlarge/us-east-1a/on-demand short -> p4d.24xlarge/us-east-1a/on-demand (pool p4d)"
	if !strings.Contains(text.String(), want) {
		t.Errorf("the text report lacks %q:\n%s", want, text.String())
	}
}
