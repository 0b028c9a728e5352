package cas_test

import (
	"fmt"
	"testing"

	"github.com/stowage-dev/stowage/controller/simulate/cas"
)

// BenchmarkRunOnce is one loop over the peak: 500 nodes, 10,000 pods,
// a tenth of the nodes under the scale-down threshold, 50 pods pending.
func BenchmarkRunOnce(b *testing.B) {
	w := newWorld()
	big := group("m6i-4x", "m6i.4xlarge", resources("16", "64Gi"), 1000)
	for i := range 500 {
		n, cpu := 20, "700m"
		if i%10 == 0 {
			n, cpu = 10, "500m"
		}
		w.nodes = append(w.nodes, readyNode(fmt.Sprintf("node-%03d", i), big, pods(fmt.Sprintf("web-%03d", i), n, cpu, "1Gi")...))
	}
	w.pending = pods("pending", 50, "1", "1Gi")
	a, err := cas.New(w.clk, []cas.NodeGroup{big, gpu})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		w.launches = nil
		a.RunOnce(b.Context(), w)
	}
}
