package report_test

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stowage-dev/stowage/controller/simulate/report"
)

// doc mirrors the documented schema (docs/guides/simulate-report.md); decoding with
// DisallowUnknownFields keeps the two in step.
type doc struct {
	SchemaVersion   int     `json:"schema_version"`
	Scenario        string  `json:"scenario"`
	Seed            int64   `json:"seed"`
	Start           string  `json:"start"`
	DurationSeconds float64 `json:"duration_seconds"`
	StepSeconds     float64 `json:"step_seconds"`
	Systems         []struct {
		Name            string  `json:"name"`
		TotalCost       float64 `json:"total_cost_usd"`
		NodesLaunched   int     `json:"nodes_launched"`
		NodesTerminated int     `json:"nodes_terminated"`
		Savings         float64 `json:"consolidation_savings_usd_per_hour"`
		PodsLost        int     `json:"pods_lost"`
		Tiers           []struct {
			Name          string             `json:"name"`
			PodsStarted   int                `json:"pods_started"`
			PodsNeverRan  int                `json:"pods_never_ran"`
			TimeToRunning map[string]float64 `json:"time_to_running"`
			MaxPending    int                `json:"max_pending"`
		} `json:"tiers"`
		Series struct {
			PendingByTier       map[string][]int     `json:"pending_by_tier"`
			NodesByInstanceType map[string][]int     `json:"nodes_by_instance_type"`
			NodesByZone         map[string][]int     `json:"nodes_by_zone"`
			NodesByCapacityType map[string][]int     `json:"nodes_by_capacity_type"`
			PodsByCapacityType  map[string][]int     `json:"pods_by_capacity_type"`
			CostPerHour         []float64            `json:"cost_usd_per_hour"`
			CostByCapacityType  map[string][]float64 `json:"cost_usd_per_hour_by_capacity_type"`
		} `json:"series"`
		Fallbacks []struct {
			At       string             `json:"at"`
			Short    map[string]string  `json:"short"`
			Chosen   *map[string]string `json:"chosen"`
			FromPool string             `json:"from_nodepool"`
			ToPool   string             `json:"to_nodepool"`
			Reason   string             `json:"reason"`
		} `json:"fallbacks"`
		Interruptions []struct {
			Instance         map[string]string `json:"instance"`
			Notice           string            `json:"notice"`
			ReplacementReady *string           `json:"replacement_ready"`
			NoticeToReady    *float64          `json:"notice_to_ready_seconds"`
			PodsLost         int               `json:"pods_lost"`
		} `json:"interruptions"`
		Consolidations []struct {
			At             string              `json:"at"`
			Method         string              `json:"method"`
			Reason         string              `json:"reason"`
			Removed        []map[string]string `json:"removed"`
			Replacements   []map[string]string `json:"replacements"`
			SavingsPerHour float64             `json:"savings_usd_per_hour"`
		} `json:"consolidations"`
		Blocked []map[string]string `json:"blocked"`
		Waits   []struct {
			Kind           string  `json:"kind"`
			Reason         string  `json:"reason"`
			Pods           int     `json:"pods"`
			NeverRan       int     `json:"never_ran"`
			LongestSeconds float64 `json:"longest_seconds"`
			Example        string  `json:"example"`
		} `json:"waits"`
		ZoneOutages []struct {
			Zone            string   `json:"zone"`
			From            string   `json:"from"`
			Until           *string  `json:"until"`
			InstancesReturn bool     `json:"instances_return"`
			Nodes           int      `json:"nodes"`
			PodsLost        int      `json:"pods_lost"`
			ToAllRunning    *float64 `json:"to_all_running_seconds"`
		} `json:"zone_outages"`
	} `json:"systems"`
}

// reportWithShortfall adds a fallback that found nothing to launch instead.
func reportWithShortfall() *report.Report {
	r := sampleReport()
	r.Systems[1].Fallbacks = []report.Fallback{{At: start, Short: report.Offering{InstanceType: "g5.12xlarge", Zone: "us-east-1a", CapacityType: "on-demand"}, Reason: "backed off"}}
	return r
}

func renderJSON(t *testing.T, r *report.Report) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := report.WriteJSON(&b, r); err != nil {
		t.Fatalf("WriteJSON: %v", err)
	}
	return b.Bytes()
}

func TestJSONReadsBack(t *testing.T) {
	var d doc
	dec := json.NewDecoder(bytes.NewReader(renderJSON(t, reportWithShortfall())))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("decoding: %v", err)
	}
	stow, ca := d.Systems[0], d.Systems[1]
	checks := []struct {
		name      string
		got, want any
	}{
		{"schema version", d.SchemaVersion, report.SchemaVersion},
		{"header", []any{d.Scenario, d.Seed, d.Start, d.DurationSeconds, d.StepSeconds}, []any{"2am-spike", int64(42), "2026-08-25T02:00:00Z", 3600.0, 60.0}},
		{"systems in order", []string{stow.Name, ca.Name}, []string{"stowage", "cluster-autoscaler"}},
		{"cost rounded to 4 places", stow.TotalCost, 123.4568},
		{"ca web p95", ca.Tiers[1].TimeToRunning["p95_seconds"], 510.0},
		{"stowage inference p99", stow.Tiers[0].TimeToRunning["p99_seconds"], 141.0},
		{"series length", len(ca.Series.NodesByZone["us-east-1a"]), 60},
		{"cost series rounded", stow.Series.CostPerHour[3], 1.8},
		{"cost by capacity type rounded", stow.Series.CostByCapacityType["on-demand"][3], 1.8},
		{"pods by capacity type", stow.Series.PodsByCapacityType["on-demand"][3], 9},
		{"fallback chosen", (*stow.Fallbacks[0].Chosen)["zone"], "us-east-1b"},
		{"fallback with nothing chosen", ca.Fallbacks[0].Chosen == nil, true},
		{"notice to ready", *stow.Interruptions[0].NoticeToReady, 70.0},
		{"no replacement", ca.Interruptions[0].ReplacementReady == nil && ca.Interruptions[0].NoticeToReady == nil, true},
		{"pods lost", ca.PodsLost, 3},
		{"replacement offering", stow.Consolidations[0].Replacements[0]["capacity_type"], "spot"},
		{"savings", stow.Savings, 0.6},
		{"disruption reason", stow.Consolidations[0].Reason, "Underutilized"},
		{"blocked candidate", []string{stow.Blocked[0]["method"], stow.Blocked[0]["blocker"], stow.Blocked[0]["node"]}, []string{"single-node", "pdb", "ip-10-0-2-3"}},
		{"empty lists are lists", ca.Consolidations != nil && ca.Waits != nil && ca.ZoneOutages != nil, true},
		{"zone outage", []any{stow.ZoneOutages[0].Zone, stow.ZoneOutages[0].Nodes, stow.ZoneOutages[0].PodsLost, *stow.ZoneOutages[0].ToAllRunning,
			stow.ZoneOutages[0].Until == nil}, []any{"us-east-1a", 4, 37, 1230.0, true}},
		{"waits, most pods first", []any{stow.Waits[0].Kind, stow.Waits[0].Pods, stow.Waits[0].NeverRan, stow.Waits[0].LongestSeconds, stow.Waits[0].Example},
			[]any{"nodeclass-not-ready", 3, 3, 10800.0, "inference/vllm-0"}},
		{"a wait of a pod that ran", []any{stow.Waits[1].Kind, stow.Waits[1].NeverRan}, []any{"shortage", 0}},
	}
	for _, c := range checks {
		if gj, wj := mustJSON(t, c.got), mustJSON(t, c.want); gj != wj {
			t.Errorf("%s = %s, want %s", c.name, gj, wj)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestJSONIsDeterministic(t *testing.T) {
	if a, b := renderJSON(t, sampleReport()), renderJSON(t, sampleReport()); !bytes.Equal(a, b) {
		t.Fatal("two renders of the same report differ")
	}
}

// dataKeys are objects whose keys are data (tier names, instance types, ...), not schema.
var dataKeys = []string{"pending_by_tier", "nodes_by_instance_type", "nodes_by_zone", "nodes_by_capacity_type", "time_to_running"}

func TestJSONFieldsAreDocumented(t *testing.T) {
	docs, err := os.ReadFile("../../../docs/guides/simulate-report.md")
	if err != nil {
		t.Fatalf("reading the schema doc: %v", err)
	}
	var v any
	if err := json.Unmarshal(renderJSON(t, reportWithShortfall()), &v); err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{"p50_seconds": true, "p95_seconds": true, "p99_seconds": true}
	collectKeys(v, keys)
	for k := range keys {
		if !strings.Contains(string(docs), "`"+k+"`") {
			t.Errorf("field %s is not documented in docs/guides/simulate-report.md", k)
		}
	}
}

func collectKeys(v any, keys map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			keys[k] = true
			if !slices.Contains(dataKeys, k) {
				collectKeys(child, keys)
			}
		}
	case []any:
		for _, child := range v {
			collectKeys(child, keys)
		}
	}
}

func TestJSONKeepsTextThatLooksLikeNumbers(t *testing.T) {
	r := hostile()
	reason := "quota \"[1, 2]\" \\ [3,\n 4] ]"
	r.Systems[0].Fallbacks[0].Reason = reason
	var d doc
	if err := json.Unmarshal(renderJSON(t, r), &d); err != nil {
		t.Fatalf("decoding: %v", err)
	}
	if got := d.Systems[0].Fallbacks[0].Reason; got != reason {
		t.Errorf("reason = %q, want %q", got, reason)
	}
	if d.Scenario != r.Scenario || d.Systems[0].Name != r.Systems[0].Name {
		t.Errorf("names changed: %q, %q", d.Scenario, d.Systems[0].Name)
	}
	if got := d.Systems[0].Series.PendingByTier["<svg onload=alert(1)>"]; len(got) != 60 {
		t.Errorf("column of a hostile tier name has %d values, want 60", len(got))
	}
}

func TestJSONPutsNumberArraysOnOneLine(t *testing.T) {
	out := string(renderJSON(t, sampleReport()))
	for _, want := range []string{`"us-east-1a": [1,1,`, `"cost_usd_per_hour": [1.5,1.6,1.7,1.8,`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s", want)
		}
	}
	if n := strings.Count(out, "\n"); n > 400 {
		t.Errorf("%d lines for a 60-sample report; number arrays are not compact", n)
	}
}
