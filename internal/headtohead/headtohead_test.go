package headtohead_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stowage-dev/stowage/internal/headtohead"
	"github.com/stowage-dev/stowage/internal/testbed"
	"github.com/stowage-dev/stowage/internal/testenv"
)

var (
	full  = flag.Bool("headtohead.full", false, "run the suite at its full size and hold Stowage to the suite's thresholds (make soak)")
	cases = flag.String("headtohead.cases", "", "regexp of the cases to run; every case when empty")
)

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard()) // the bed's admin client logs nothing worth reading
	os.Exit(m.Run())
}

// TestBothSystemsRunTheSuitesPods is the harness's own check, at a hundredth
// of the basic case's scale-out: the bed starts the real Karpenter with its
// CRDs and its kwok provider, and Stowage, each gets every pod Running on
// nodes it launched, and every node of either has the allocatable Stowage
// predicts for its type: Karpenter's kwok provider computes its Nodes'
// allocatable from the instance types file in its own code, so a mismatch
// means the two do not plan with the same offerings.
func TestBothSystemsRunTheSuitesPods(t *testing.T) {
	env := newEnv(t)
	basic := headtohead.Suite()[0]
	basic.Phases = basic.Phases[:1]
	sizes := headtohead.Sizes{Divisor: 100, Timeout: 5 * time.Minute}
	for _, system := range []string{headtohead.Karpenter, headtohead.Stowage} {
		t.Run(system, func(t *testing.T) {
			var nodes []corev1.Node
			results, err := headtohead.RunCase(t.Context(), env, system, basic, sizes, func(ns []corev1.Node) { nodes = ns })
			if err != nil {
				t.Fatal(err)
			}
			r := results[0]
			t.Log(r.BenchLine())
			if r.Pods != 10 || r.Nodes == 0 || r.CostPerHour <= 0 || r.CPUUtil <= 0 || r.CPUUtil > 1 || r.MemUtil <= 0 || r.MemUtil > 1 {
				t.Errorf("want 10 pods on a priced fleet with utilisations in (0, 1], got %+v", r)
			}
			if r.ControllerCPUSeconds <= 0 || r.ControllerPeakRSSMiB <= 0 {
				t.Errorf("the controller's CPU time and memory were not measured: %+v", r)
			}
			checkAllocatable(t, nodes)
		})
	}
}

// checkAllocatable compares every node's allocatable with the prediction for its type.
func checkAllocatable(t *testing.T, nodes []corev1.Node) {
	t.Helper()
	infos := map[string]bool{}
	predicted := map[string]corev1.ResourceList{}
	for _, info := range headtohead.Catalogue() {
		infos[info.Name] = true
		predicted[info.Name] = testbed.PredictedAllocatable(info)
	}
	for _, n := range nodes {
		typ := n.Labels[corev1.LabelInstanceTypeStable]
		if !infos[typ] {
			t.Errorf("node %s is of type %q, which is not in the benchmark's catalogue", n.Name, typ)
			continue
		}
		for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods} {
			want, got := predicted[typ][res], n.Status.Allocatable[res]
			if got.Cmp(want) != 0 {
				t.Errorf("node %s (%s) has %s allocatable %s, Stowage predicts %s", n.Name, typ, res, got.String(), want.String())
			}
		}
	}
}

// BenchmarkHeadToHead runs every case of Karpenter's performance suite on
// the bed, against Karpenter and then Stowage, and prints one BENCH line per
// phase and system; a 25th of the suite's size unless -headtohead.full.
// Missed thresholds are logged; at full size Stowage's fail the benchmark.
// A do-not-disrupt scale-in in which Stowage removed every node running a
// protected pod fails it at any size.
func BenchmarkHeadToHead(b *testing.B) {
	env := newEnv(b)
	sizes := headtohead.Short
	if *full {
		sizes = headtohead.Full
	}
	filter := regexp.MustCompile(*cases)
	load := sampleLoad(b.Context())
	for range b.N {
		for _, c := range headtohead.Suite() {
			if !filter.MatchString(c.Name) {
				continue
			}
			for _, system := range []string{headtohead.Karpenter, headtohead.Stowage} {
				results, err := headtohead.RunCase(b.Context(), env, system, c, sizes, nil)
				if err != nil {
					b.Error(err) // the other cases still run: a run takes an hour
				}
				report(b, c, system, results)
			}
		}
	}
	fmt.Printf("BENCH headtohead=machine cores=%d %s\n", runtime.NumCPU(), load())
}

// report prints the results' BENCH lines and judges them against the suite.
func report(b *testing.B, c headtohead.Case, system string, results []headtohead.Result) {
	for i, r := range results {
		fmt.Println(r.BenchLine())
		for _, v := range r.Violations(c.Phases[i].Thresholds) {
			if *full && system == headtohead.Stowage {
				b.Errorf("%s on %s: %s", r.Name(), system, v)
			} else {
				b.Logf("%s on %s misses the suite's threshold: %s", r.Name(), system, v)
			}
		}
		if c.Name == "do-not-disrupt" && r.Kind == headtohead.ScaleIn && r.ProtectedNodesKept == 0 {
			if system == headtohead.Stowage {
				b.Errorf("%s on %s: no node that ran a do-not-disrupt pod is left", r.Name(), system)
			} else {
				b.Logf("%s on %s: no node that ran a do-not-disrupt pod is left", r.Name(), system)
			}
		}
	}
}

// newEnv finds the bed's binaries and Karpenter's (failing, naming make
// tools, when they are not built) and builds stowage from this tree.
func newEnv(t testing.TB) headtohead.Env {
	t.Helper()
	bin := testenv.RequireAssets(t)
	k, err := testenv.KarpenterAssets()
	if err != nil {
		t.Fatal(err)
	}
	stowage, err := buildStowage()
	if err != nil {
		t.Fatal(err)
	}
	return headtohead.Env{BinDir: bin, Karpenter: k, Stowage: stowage, Dir: t.TempDir()}
}

var stowageBuild = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "headtohead-stowage-")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "stowage")
	build := exec.Command("go", "build", "-o", out, "github.com/stowage-dev/stowage/controller/cmd/stowage")
	if msg, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building stowage: %w\n%s", err, msg)
	}
	return out, nil
})

func buildStowage() (string, error) { return stowageBuild() }

// sampleLoad reads the one-minute load average every 10 s until ctx ends;
// the function it returns prints the mean and the highest seen.
func sampleLoad(ctx context.Context) func() string {
	var mu sync.Mutex
	var sum, peak float64
	var n int
	read := func() {
		data, err := os.ReadFile("/proc/loadavg")
		if err != nil {
			return
		}
		v, err := strconv.ParseFloat(strings.Fields(string(data))[0], 64)
		if err != nil {
			return
		}
		mu.Lock()
		sum, peak, n = sum+v, max(peak, v), n+1
		mu.Unlock()
	}
	read()
	go func() {
		tick := time.NewTicker(10 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				read()
			}
		}
	}()
	return func() string {
		read()
		mu.Lock()
		defer mu.Unlock()
		return fmt.Sprintf("load1_mean=%.1f load1_max=%.1f", sum/float64(n), peak)
	}
}
