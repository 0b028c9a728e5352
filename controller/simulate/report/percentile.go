package report

import (
	"math"
	"slices"
	"time"
)

// Percentile is the nearest-rank p-th percentile (0 < p <= 100) of sorted
// durations: the value at 1-based rank ceil(p/100 * n). It is 0 for no values.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(p * float64(n) / 100))
	return sorted[min(max(rank, 1), n)-1]
}

// NewLatency computes p50, p95 and p99 of samples, in any order; samples is not modified.
func NewLatency(samples []time.Duration) Latency {
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	return Latency{P50: Percentile(sorted, 50), P95: Percentile(sorted, 95), P99: Percentile(sorted, 99)}
}

// NewTier builds a Tier from every started pod's time to Running and the
// waits of the pods that never ran.
func NewTier(name string, timesToRunning, neverRan []time.Duration, maxPending int) Tier {
	return Tier{Name: name, PodsStarted: len(timesToRunning), PodsNeverRan: len(neverRan),
		TimeToRunning: NewLatency(slices.Concat(timesToRunning, neverRan)), MaxPending: maxPending}
}
