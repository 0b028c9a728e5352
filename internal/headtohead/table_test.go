package headtohead_test

import (
	"strings"
	"testing"

	"github.com/stowage-dev/stowage/internal/headtohead"
)

const benchOutput = `goos: linux
BENCH headtohead=basic/scale-out system=karpenter pods=40 time_to_running_seconds=30.0 nodes=9 cost_per_hour=5.000 cpu_util=0.700 mem_util=0.800 controller_cpu_seconds=4.00 controller_peak_rss_mib=90.0
BENCH headtohead=basic/scale-out system=stowage pods=40 time_to_running_seconds=20.0 nodes=8 cost_per_hour=4.500 cpu_util=0.650 mem_util=0.850 controller_cpu_seconds=5.00 controller_peak_rss_mib=80.0
BENCH headtohead=basic/scale-in system=karpenter pods=28 time_to_running_seconds=1.0 nodes=6 cost_per_hour=5.000 cpu_util=0.700 mem_util=0.800 controller_cpu_seconds=4.00 controller_peak_rss_mib=90.0 settle_seconds=50.0 cost_after=3.000
BENCH headtohead=basic/scale-in system=stowage pods=28 time_to_running_seconds=1.0 nodes=6 cost_per_hour=4.500 cpu_util=0.700 mem_util=0.800 controller_cpu_seconds=4.00 controller_peak_rss_mib=80.0 settle_seconds=60.0 cost_after=3.000
BENCH headtohead=machine cores=2 load1_mean=3.0 load1_max=5.0
ok`

func TestRenderSaysWhereKarpenterIsAhead(t *testing.T) {
	lines, err := headtohead.ParseBench(strings.NewReader(benchOutput))
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 5 {
		t.Fatalf("parsed %d lines, want 5", len(lines))
	}
	var b strings.Builder
	if err := headtohead.Render(&b, lines, headtohead.Page{Machine: "m", Commit: "c", KarpenterVersion: "v1.15.0", Sizes: "s"}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	_, ahead, _ := strings.Cut(page, "## Where Karpenter is ahead")
	for _, want := range []string{"**basic/scale-out**: CPU util 0.700 against Stowage's 0.650; controller CPU (s) 4.00 against Stowage's 5.00.",
		"**basic/scale-in**: settled (s) 50.0 against Stowage's 60.0."} {
		if !strings.Contains(ahead, want) {
			t.Errorf("the page's list does not say %q:\n%s", want, ahead)
		}
	}
	for _, notAhead := range []string{"to Running", "$/h ", "mem util", "peak RSS"} {
		if strings.Contains(ahead, notAhead) {
			t.Errorf("the page says Karpenter is ahead on %q, where it is not:\n%s", notAhead, ahead)
		}
	}
	if !strings.Contains(page, "| basic/scale-in | stowage | 28 | 1.0 | 6 | 4.500 |") {
		t.Errorf("the table lacks Stowage's scale-in row:\n%s", page)
	}
}

func TestRenderRefusesAPhaseMeasuredOnOneSystem(t *testing.T) {
	lines, _ := headtohead.ParseBench(strings.NewReader(strings.SplitN(benchOutput, "\n", 3)[1]))
	if err := headtohead.Render(&strings.Builder{}, lines, headtohead.Page{}); err == nil {
		t.Error("a phase with only Karpenter's line rendered")
	}
}
