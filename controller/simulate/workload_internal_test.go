package simulate

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestScaleDownOrderRanksAsKubeControllerManager checks scaleDownOrder on
// random workloads against the ranking written out one pod at a time:
// unbound pods newest first, then each time the newest pod of the node
// running the most pods, the node whose newest is newest among equals.
func TestScaleDownOrderRanksAsKubeControllerManager(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 2))
		var live []*simPod
		for i := range 1 + rng.IntN(60) {
			sp := &simPod{key: fmt.Sprintf("default/web-%03d", i), seq: i, created: epoch.Add(time.Duration(rng.IntN(5)) * time.Second)}
			if rng.IntN(5) > 0 {
				sp.bound, sp.node = epoch, fmt.Sprintf("node-%d", rng.IntN(6))
			}
			live = append(live, sp)
		}
		// Creation order: by time, ties in name order.
		slices.SortStableFunc(live, func(a, b *simPod) int { return a.created.Compare(b.created) })
		n := 1 + rng.IntN(len(live))
		got, want := keys(scaleDownOrder(live, n)), keys(rankOneByOne(live, n))
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d, %d of %d pods: scaleDownOrder gives %v, ranking one by one gives %v", seed, n, len(live), got, want)
		}
	}
}

func rankOneByOne(live []*simPod, n int) []*simPod {
	var out []*simPod
	for i := len(live) - 1; i >= 0 && len(out) < n; i-- {
		if live[i].bound.IsZero() {
			out = append(out, live[i])
		}
	}
	taken := map[*simPod]bool{}
	for len(out) < n {
		count, newest := map[string]int{}, map[string]*simPod{}
		for _, sp := range live {
			if !sp.bound.IsZero() && !taken[sp] {
				count[sp.node]++
				newest[sp.node] = sp
			}
		}
		best := ""
		for node, c := range count {
			if best == "" || c > count[best] || c == count[best] && newer(newest[node], newest[best]) {
				best = node
			}
		}
		taken[newest[best]] = true
		out = append(out, newest[best])
	}
	return out
}

func keys(pods []*simPod) []string {
	out := make([]string, len(pods))
	for i, sp := range pods {
		out[i] = sp.key
	}
	return out
}
