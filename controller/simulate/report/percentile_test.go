package report_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stowage-dev/stowage/controller/simulate/report"
)

// secondsUpTo is 1s, 2s, ..., n seconds.
func secondsUpTo(n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(i+1) * time.Second
	}
	return out
}

// The expected values are worked by hand with the nearest-rank rule: the
// p-th percentile of n sorted values is the one at rank ceil(p/100 * n).
func TestPercentileNearestRank(t *testing.T) {
	cases := []struct {
		name          string
		values        []time.Duration
		p50, p95, p99 time.Duration
	}{
		{"no values", nil, 0, 0, 0},
		{"one value", []time.Duration{7 * time.Second}, 7 * time.Second, 7 * time.Second, 7 * time.Second},
		{"1..10s: ranks 5, 10, 10", secondsUpTo(10), 5 * time.Second, 10 * time.Second, 10 * time.Second},
		{"1..20s: ranks 10, 19, 20", secondsUpTo(20), 10 * time.Second, 19 * time.Second, 20 * time.Second},
		{"1..100s: ranks 50, 95, 99", secondsUpTo(100), 50 * time.Second, 95 * time.Second, 99 * time.Second},
		{"1..101s: ranks 51, 96, 100", secondsUpTo(101), 51 * time.Second, 96 * time.Second, 100 * time.Second},
		{"two values: ranks 1, 2, 2", []time.Duration{time.Minute, 3 * time.Minute}, time.Minute, 3 * time.Minute, 3 * time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := report.NewLatency(tc.values)
			want := report.Latency{P50: tc.p50, P95: tc.p95, P99: tc.p99}
			if got != want {
				t.Fatalf("NewLatency = %+v, want %+v", got, want)
			}
		})
	}
}

func TestNewLatencySortsACopy(t *testing.T) {
	values := []time.Duration{9 * time.Second, time.Second, 5 * time.Second, 3 * time.Second}
	before := slices.Clone(values)
	got := report.NewLatency(values)
	if got.P50 != 3*time.Second || got.P99 != 9*time.Second {
		t.Errorf("NewLatency = %+v, want p50 3s and p99 9s", got)
	}
	if !slices.Equal(values, before) {
		t.Errorf("NewLatency reordered its input to %v", values)
	}
}

func TestPercentileBounds(t *testing.T) {
	sorted := secondsUpTo(4)
	if got := report.Percentile(sorted, 0); got != time.Second {
		t.Errorf("p0 = %s, want the smallest value", got)
	}
	if got := report.Percentile(sorted, 100); got != 4*time.Second {
		t.Errorf("p100 = %s, want the largest value", got)
	}
}

func TestNewTier(t *testing.T) {
	tier := report.NewTier("web", secondsUpTo(20), nil, 7)
	if tier.Name != "web" || tier.PodsStarted != 20 || tier.MaxPending != 7 || tier.TimeToRunning.P95 != 19*time.Second {
		t.Fatalf("NewTier = %+v", tier)
	}
}

func TestNewTierCountsThePodsThatNeverRanByTheirWait(t *testing.T) {
	// 18 pods ran in 1..18 s; two never ran and waited an hour: p95 (rank 19 of 20) is an hour.
	tier := report.NewTier("gpu", secondsUpTo(18), []time.Duration{time.Hour, time.Hour}, 2)
	if tier.PodsStarted != 18 || tier.PodsNeverRan != 2 || tier.TimeToRunning.P50 != 10*time.Second || tier.TimeToRunning.P95 != time.Hour {
		t.Fatalf("NewTier = %+v", tier)
	}
}

func TestSeriesAppendZeroFillsNewKeys(t *testing.T) {
	var s report.Series
	s.Append(report.Sample{PendingByTier: map[string]int{"web": 3}, CostPerHour: 1})
	s.Append(report.Sample{PendingByTier: map[string]int{"inference": 2}, NodesByZone: map[string]int{"us-east-1a": 1}, CostPerHour: 2})
	s.Append(report.Sample{PendingByTier: map[string]int{"web": 1, "inference": 4}, CostPerHour: 3})
	checks := []struct {
		name      string
		got, want []int
	}{
		{"web", s.PendingByTier["web"], []int{3, 0, 1}},
		{"inference", s.PendingByTier["inference"], []int{0, 2, 4}},
		{"zone", s.NodesByZone["us-east-1a"], []int{0, 1, 0}},
		{"total", s.PendingTotal(), []int{3, 2, 5}},
		{"nodes", s.NodesTotal(), []int{0, 0, 0}},
	}
	for _, c := range checks {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if s.Len() != 3 {
		t.Errorf("Len = %d, want 3", s.Len())
	}
}
