package e2e_test

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/internal/testbed"
)

// The bed envelope's stop rules: the largest fleet the bed holds is the last
// step that broke none of them.
const (
	// envelopeAPIP99 bounds kube-apiserver's 99th percentile request
	// latency over a step (every verb but the long-running ones).
	envelopeAPIP99 = time.Second
	// envelopeMemory bounds the machine's memory in use, a fraction; it also
	// protects whatever else the machine runs: a step is abandoned the moment
	// it is crossed.
	envelopeMemory = 0.80
	// envelopeToRunning bounds the time from a pod's creation to Running.
	envelopeToRunning = 10 * time.Minute
)

var envelopeSteps = flag.String("envelope.steps", "50,100,250,500,1000,2000,4000,8000",
	"the bed envelope's node counts, in the order tried (BenchmarkBedEnvelope)")

const envelopeNS = "envelope"

// BenchmarkBedEnvelope steps the whole bed (real kube-apiserver, etcd,
// kube-scheduler, kube-controller-manager, kwok as every kubelet, the AWS
// emulator, Stowage as `stowage run` wires it) up through -envelope.steps
// nodes: each step scales a Deployment whose pods each need a node of their
// own to that many pods, and measures, until every pod runs, the time from
// each pod's creation to Running, kube-apiserver's p99 request latency and
// the machine's memory in use. It prints one BENCH line per step and a last
// one naming the largest step that broke no stop rule, the step that did and
// which rule it broke ("controller" when Stowage lost its lease mid-step).
func BenchmarkBedEnvelope(b *testing.B) {
	steps, err := parseSteps(*envelopeSteps)
	if err != nil {
		b.Fatal(err)
	}
	bd := startBed(b, testbed.Options{PoolCapacity: 2 * slices.Max(steps)})
	r := bd.startEnvelope(true)
	for range b.N {
		held, stop := 0, envelopeResult{}
		for _, n := range steps {
			res := bd.envelopeStep(b.Context(), r, n)
			fmt.Println(res.benchLine())
			for _, line := range res.diagnosis {
				fmt.Println(line)
			}
			if res.broke != "" {
				stop = res
				break
			}
			held = n
		}
		fmt.Println(limitLine(held, stop))
	}
}

func parseSteps(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 || (len(out) > 0 && n <= out[len(out)-1]) {
			return nil, fmt.Errorf("-envelope.steps: %q is not a rising list of node counts, e.g. 250,500,1000", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// envelopeLeases are `stowage run`'s default leader-election timings, in
// place of the bed's short ones (made for quick failover tests): a renewal
// late by 3 s on the loaded bed would end the controller, and the envelope
// measures it as it is deployed.
var envelopeLeases = []string{"--leader-election-lease-duration=10s",
	"--leader-election-renew-deadline=7s", "--leader-election-retry-period=2s"}

// startEnvelope starts Stowage with its pool and the envelope's Deployment,
// and waits until it leads. mayLoseLease makes a lost lease a step's stop
// (the controller did not keep up) rather than an error.
func (b *bed) startEnvelope(mayLoseLease bool) *replica {
	b.create(nodeClass(), nodePool())
	r := b.startReplica("envelope", replicaOptions{releaseOnCancel: true, flags: envelopeLeases, mayLoseLease: mayLoseLease})
	b.waitElected(r, 30*time.Second)
	b.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: envelopeNS}}, envelopeDeployment())
	return r
}

// envelopeDeployment runs no pods yet; each of its pods is small and needs a
// node of its own (a required anti-affinity on the hostname), so that its
// replicas are the fleet's node count.
func envelopeDeployment() *appsv1.Deployment {
	d := oneNodeEach(deployment(envelopeNS, "spread", 0, "100m"))
	d.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory] = resource.MustParse("128Mi")
	return d
}

// envelopeResult is one step's measurements.
type envelopeResult struct {
	nodes, running int
	toRunning      []time.Duration // sorted
	apiP99         time.Duration
	memory         float64 // the most in use during the step, a fraction
	cpu, bedCPU    float64
	took           time.Duration
	// broke names the stop rule the step broke, or "controller" when the
	// controller stopped; empty when none.
	broke, detail string
	// diagnosis says, when pods were late, where each stood (diagnoseLate).
	diagnosis []string
}

// envelopeStep scales the Deployment to n pods and waits until they all run,
// a pod has waited envelopeToRunning, the memory rule breaks, or the
// controller r stops (it lost its lease: it did not keep up).
func (b *bed) envelopeStep(ctx context.Context, r *replica, n int) envelopeResult {
	res := envelopeResult{nodes: n}
	before, err := apiLatency(ctx, b.ControlPlane.Config)
	if err != nil {
		b.t.Fatal(err)
	}
	// The pods of the steps before run already: only the new ones are timed.
	seen := map[string]time.Duration{}
	if _, err := b.observeRunning(ctx, seen); err != nil {
		b.t.Fatal(err)
	}
	prior := maps.Clone(seen)
	cpu0, bed0, start := cpuSeconds(), childCPUSeconds(), time.Now()
	b.scale(envelopeNS, "spread", int32(n))
	err = wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := b.Err(); err != nil {
			return false, err
		}
		mem, err := memoryInUse()
		if err != nil {
			return false, err
		}
		res.memory = max(res.memory, mem)
		late, err := b.observeRunning(ctx, seen)
		if err != nil {
			return false, err
		}
		res.running = len(seen)
		switch {
		case !r.alive():
			res.broke, res.detail = "controller", fmt.Sprintf("the controller stopped: %v", r.stop())
		case res.memory > envelopeMemory:
			res.broke, res.detail = "memory", fmt.Sprintf("%.0f%% of the machine's memory in use", 100*res.memory)
		case len(late) > 0:
			res.broke, res.detail = "to_running", fmt.Sprintf("%d pods not Running %s after their creation", len(late), envelopeToRunning)
			res.diagnosis = b.diagnoseLate(ctx, late)
		}
		return res.broke != "" || len(seen) == n, nil
	})
	if err != nil {
		b.t.Fatal(err)
	}
	res.took, res.cpu, res.bedCPU = time.Since(start), cpuSeconds()-cpu0, childCPUSeconds()-bed0
	for name, d := range seen {
		if _, old := prior[name]; !old {
			res.toRunning = append(res.toRunning, d)
		}
	}
	slices.Sort(res.toRunning)
	after, err := apiLatency(ctx, b.ControlPlane.Config)
	if err != nil {
		b.t.Fatal(err)
	}
	step := after.minus(before)
	res.apiP99 = time.Duration(step.quantile(0.99) * float64(time.Second))
	if res.broke == "" && res.apiP99 > envelopeAPIP99 {
		series, slow := step.slowest()
		res.broke, res.detail = "apiserver_p99", fmt.Sprintf("kube-apiserver's p99 request latency %s is above %s; most requests above it: %.0f of %s",
			res.apiP99.Round(time.Millisecond), envelopeAPIP99, slow, series)
	}
	return res
}

// observeRunning records, for each pod of the Deployment seen Running for
// the first time, the time from its creation; it returns how many pods are
// not Running envelopeToRunning after their creation, by name.
func (b *bed) observeRunning(ctx context.Context, seen map[string]time.Duration) (late []string, err error) {
	var pods corev1.PodList
	if err := b.Admin.List(ctx, &pods, client.InNamespace(envelopeNS), client.MatchingLabels{"app": "spread"}); err != nil {
		return nil, err
	}
	now := time.Now()
	for _, p := range pods.Items {
		waited := now.Sub(p.CreationTimestamp.Time)
		if _, ok := seen[p.Name]; ok {
			continue
		}
		switch {
		case p.Status.Phase == corev1.PodRunning:
			seen[p.Name] = waited
		case waited > envelopeToRunning:
			late = append(late, p.Name)
		}
	}
	return late, nil
}

func (r envelopeResult) benchLine() string {
	at := func(q float64) float64 {
		if len(r.toRunning) == 0 {
			return 0
		}
		return quantile(r.toRunning, q).Seconds()
	}
	line := fmt.Sprintf("BENCH bed=envelope nodes=%d pods_running=%d p50_to_running=%.1fs max_to_running=%.1fs apiserver_p99=%.3fs mem_in_use=%.0f%% took=%.0fs cpu_seconds=%.1f bed_cpu_seconds=%.1f load1=%s",
		r.nodes, r.running, at(0.5), at(1), r.apiP99.Seconds(), 100*r.memory, r.took.Seconds(), r.cpu, r.bedCPU, loadAverage())
	if r.broke != "" {
		line += " broke=" + r.broke
	}
	return line
}

// limitLine names the largest fleet held and why the next step stopped.
func limitLine(held int, stop envelopeResult) string {
	if stop.broke == "" {
		return fmt.Sprintf("BENCH bed=envelope-limit held_nodes=%d stopped_at=none reason=none detail=%q", held,
			"no stop rule broke up to the last step; raise -envelope.steps")
	}
	return fmt.Sprintf("BENCH bed=envelope-limit held_nodes=%d stopped_at=%d reason=%s detail=%q", held, stop.nodes, stop.broke, stop.detail)
}

// memoryInUse is the fraction of the machine's memory not available
// (MemTotal less MemAvailable, /proc/meminfo).
func memoryInUse() (float64, error) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	fields := map[string]float64{}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if n, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64); err == nil {
			fields[k] = n
		}
	}
	if fields["MemTotal"] <= 0 {
		return 0, fmt.Errorf("/proc/meminfo has no MemTotal")
	}
	return 1 - fields["MemAvailable"]/fields["MemTotal"], nil
}

// loadAverage is the machine's one-minute load average, or "unknown".
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	if f := strings.Fields(string(data)); len(f) > 0 {
		return f[0]
	}
	return "unknown"
}

// TestBedEnvelopeStepMeasures runs two small steps of the envelope on the
// bed, as make soak's BenchmarkBedEnvelope runs large ones, and checks what
// a step measures: every pod Running on a node of its own, a latency read
// from kube-apiserver's own histogram, the machine's memory in use.
func TestBedEnvelopeStepMeasures(t *testing.T) {
	bd := startBed(t, testbed.Options{})
	r := bd.startEnvelope(false)
	prev := 0
	for _, n := range []int{2, 4} {
		res := bd.envelopeStep(t.Context(), r, n)
		t.Log(res.benchLine())
		if res.broke != "" {
			t.Fatalf("a step of %d nodes broke the %s rule: %s", n, res.broke, res.detail)
		}
		if res.running != n || len(res.toRunning) != n-prev {
			t.Errorf("%d pods seen Running, %d of them new, want %d and %d", res.running, len(res.toRunning), n, n-prev)
		}
		if res.apiP99 <= 0 || res.apiP99 > time.Minute {
			t.Errorf("kube-apiserver's p99 = %s, want a latency above 0 (the step made requests) and below a minute", res.apiP99)
		}
		if res.memory <= 0 || res.memory >= 1 {
			t.Errorf("memory in use = %v, want a fraction", res.memory)
		}
		if err := bd.onePodPerNode(t.Context(), n); err != nil {
			t.Error(err)
		}
		prev = n
	}
}

// onePodPerNode checks that n pods of the Deployment run on n nodes.
func (b *bed) onePodPerNode(ctx context.Context, n int) error {
	var pods corev1.PodList
	if err := b.Admin.List(ctx, &pods, client.InNamespace(envelopeNS), client.MatchingLabels{"app": "spread"}); err != nil {
		return err
	}
	nodes := map[string]bool{}
	for _, p := range pods.Items {
		nodes[p.Spec.NodeName] = true
	}
	if len(pods.Items) != n || len(nodes) != n || nodes[""] {
		return fmt.Errorf("%d pods on %d nodes, want %d on %d", len(pods.Items), len(nodes), n, n)
	}
	return nil
}
