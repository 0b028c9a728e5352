package disruption_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/disruption"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

func TestNewBudgets(t *testing.T) {
	// epoch is Sunday 02:00 UTC.
	const business = "0 9 * * 1-5"
	monday10 := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	monday18 := time.Date(2026, 11, 2, 18, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		budgets []v1alpha1.Budget
		nodes   []*scheduler.StateNode
		busy    map[string]bool
		at      time.Time
		want    int
		wantErr string
	}{
		{name: "the default budget is 10%, rounded up", nodes: nodes(25, "default"), want: 3},
		{name: "10% of 25 nodes is 3", budgets: []v1alpha1.Budget{budget("10%", "", 0)}, nodes: nodes(25, "default"), want: 3},
		{name: "5% of 10 nodes is 1, not 0", budgets: []v1alpha1.Budget{budget("5%", "", 0)}, nodes: nodes(10, "default"), want: 1},
		{name: "10% of 20 nodes is 2", budgets: []v1alpha1.Budget{budget("10%", "", 0)}, nodes: nodes(20, "default"), want: 2},
		{name: "0% allows none", budgets: []v1alpha1.Budget{budget("0%", "", 0)}, nodes: nodes(25, "default"), want: 0},
		{name: "0 allows none", budgets: []v1alpha1.Budget{budget("0", "", 0)}, nodes: nodes(25, "default"), want: 0},
		{name: "a count is a count", budgets: []v1alpha1.Budget{budget("4", "", 0)}, nodes: nodes(2, "default"), want: 4},
		{name: "the most restrictive budget wins",
			budgets: []v1alpha1.Budget{budget("50%", "", 0), budget("2", "", 0), budget("20%", "", 0)}, nodes: nodes(25, "default"), want: 2},
		{name: "a budget inside its window applies",
			budgets: []v1alpha1.Budget{budget("10%", "", 0), budget("0", business, 8*time.Hour)}, nodes: nodes(25, "default"), at: monday10, want: 0},
		{name: "a budget outside its window does not",
			budgets: []v1alpha1.Budget{budget("10%", "", 0), budget("0", business, 8*time.Hour)}, nodes: nodes(25, "default"), at: monday18, want: 3},
		{name: "a budget outside its window on a weekend does not",
			budgets: []v1alpha1.Budget{budget("0", business, 8*time.Hour)}, nodes: nodes(25, "default"), at: epoch, want: disruption.Unbounded},
		{name: "a budget for other reasons does not apply",
			budgets: []v1alpha1.Budget{budget("10%", "", 0), budget("0", "", 0, v1alpha1.DisruptionReasonDrifted, v1alpha1.DisruptionReasonUnderutilized)},
			nodes:   nodes(25, "default"), want: 3},
		{name: "a budget naming Empty applies",
			budgets: []v1alpha1.Budget{budget("10%", "", 0), budget("1", "", 0, v1alpha1.DisruptionReasonEmpty)}, nodes: nodes(25, "default"), want: 1},
		{name: "nodes already being deleted count against the budget",
			budgets: []v1alpha1.Budget{budget("10%", "", 0)},
			nodes:   append(nodes(23, "default"), marked(node("x", "default", 0)), marked(node("y", "default", 0))), want: 1},
		{name: "a node whose instance is shutting down after its drain counts in neither the nodes nor those disrupted",
			budgets: []v1alpha1.Budget{budget("2", "", 0)}, nodes: append(nodes(3, "default"), terminating(marked(node("x", "default", 0)))), want: 2},
		{name: "nodes that are not Ready count against the budget",
			budgets: []v1alpha1.Budget{budget("2", "", 0)}, nodes: append(nodes(3, "default"), notReady(node("x", "default", 0))), want: 1},
		{name: "nodes of commands not yet executed count against the budget",
			budgets: []v1alpha1.Budget{budget("2", "", 0)}, nodes: nodes(3, "default"), busy: map[string]bool{"n01": true}, want: 1},
		{name: "the budget never goes below 0",
			budgets: []v1alpha1.Budget{budget("1", "", 0)}, nodes: append(nodes(3, "default"), marked(node("x", "default", 0)), marked(node("y", "default", 0))), want: 0},
		{name: "another pool's nodes do not count",
			budgets: []v1alpha1.Budget{budget("10%", "", 0)}, nodes: append(nodes(10, "default"), nodes(30, "other")...), want: 1},
		{name: "a schedule cron cannot read allows nothing",
			budgets: []v1alpha1.Budget{budget("10%", "", 0), budget("5", "61 * * * *", time.Hour)}, nodes: nodes(25, "default"), want: 0,
			wantErr: `evaluating the budgets of nodepool default: budget 1: parsing schedule "61 * * * *"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := tc.at
			if at.IsZero() {
				at = epoch
			}
			pools := disruption.DefaultedPools([]*v1alpha1.NodePool{pool("default", "0s", tc.budgets...), pool("other", "0s", budget("0", "", 0))})
			got, err := disruption.NewBudgets(tc.nodes, pools, at, v1alpha1.DisruptionReasonEmpty, tc.busy)
			if (err != nil || tc.wantErr != "") && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if got["default"] != tc.want {
				t.Errorf("allowed %d, want %d", got["default"], tc.want)
			}
			if got["other"] != 0 {
				t.Errorf("the other pool allows %d, want 0", got["other"])
			}
		})
	}
}

func TestActive(t *testing.T) {
	b := budget("0", "0 9 * * *", time.Hour)
	for _, tc := range []struct {
		at   string
		want bool
	}{
		{"08:59:59", false},
		{"09:00:00", true},
		{"09:59:59", true},
		{"10:00:00", false},
	} {
		at, err := time.Parse(time.DateTime, "2026-11-02 "+tc.at)
		fatalIf(t, err)
		got, err := disruption.Active(b, at)
		fatalIf(t, err)
		if got != tc.want {
			t.Errorf("active at %s: %v, want %v", tc.at, got, tc.want)
		}
	}
	daily := budget("0", "@daily", 2*time.Hour)
	if got, _ := disruption.Active(daily, epoch.Add(-time.Minute)); !got {
		t.Errorf("@daily for 2h: not active at 01:59, want active")
	}
	if got, _ := disruption.Active(daily, epoch); got {
		t.Errorf("@daily for 2h: active at 02:00, want not")
	}
	if got, err := disruption.Active(budget("0", "", 0), epoch); !got || err != nil {
		t.Errorf("without a schedule: %v, %v; want always active", got, err)
	}
}
