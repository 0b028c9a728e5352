package headtohead

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/internal/testbed"
)

// Sizes say how large and how patient a run is.
type Sizes struct {
	// Divisor divides every replica count (rounded up): 1 is the suite's size.
	Divisor int
	// Quiet is how long the fleet must stay unchanged to count as settled.
	Quiet time.Duration
	// Timeout bounds each wait.
	Timeout time.Duration
}

var (
	// Short is `make bench`'s size: a 25th of the suite's pods, and a quiet
	// window longer than consolidateAfter plus a consolidation's validation.
	Short = Sizes{Divisor: 25, Quiet: 90 * time.Second, Timeout: 15 * time.Minute}
	// Full is the suite's size and its three minutes without disruption.
	Full = Sizes{Divisor: 1, Quiet: 3 * time.Minute, Timeout: 60 * time.Minute}
)

// RunCase starts a bed, runs the named system on it through the case's
// phases at the sizes, and stops everything again. inspect, when not nil,
// is given the fleet's nodes after the last phase.
func RunCase(ctx context.Context, env Env, system string, c Case, sizes Sizes, inspect func([]corev1.Node)) (results []Result, err error) {
	sys, err := env.System(system)
	if err != nil {
		return nil, err
	}
	boot := testbed.BootDelay{Min: RegistrationDelay, Max: RegistrationDelay}
	bed, err := testbed.Start(ctx, testbed.Options{BinDir: env.BinDir, InstanceTypes: emulatorTypes(), BootDelay: boot})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, bed.Stop()) }()
	if err := bed.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}); err != nil {
		return nil, err
	}
	if err := sys.Start(ctx, bed); err != nil {
		return nil, fmt.Errorf("starting %s: %w", system, err)
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w\n%s's last log lines:\n%s", err, system, logTail(sys.Process().LogPath, 30))
		}
		sys.Process().Kill() // measured: a graceful stop (Karpenter's takes over 10 s) proves nothing here
	}()
	cs, err := kubernetes.NewForConfig(bed.ControlPlane.Config)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fleet, err := Watch(wctx, cs, sys.PoolLabel(), sys.DisruptedTaint())
	if err != nil {
		return nil, err
	}
	r := &runner{bed: bed, sys: sys, fleet: fleet, prices: prices(), sizes: sizes, c: c.Scaled(sizes.Divisor), replicas: map[string]int32{}}
	for _, p := range r.c.Phases {
		res, err := r.phase(ctx, p)
		if err != nil {
			return results, fmt.Errorf("%s/%s on %s: %w", c.Name, p.Name, system, err)
		}
		results = append(results, res)
	}
	if inspect != nil {
		inspect(fleet.Nodes())
	}
	return results, nil
}

// runner runs one case's phases on one system.
type runner struct {
	bed      *testbed.Bed
	sys      System
	fleet    *Fleet
	prices   map[string]float64
	sizes    Sizes
	c        Case
	replicas map[string]int32 // workload -> replicas now
}

// phase applies p, waits for its end, and measures it.
func (r *runner) phase(ctx context.Context, p Phase) (Result, error) {
	res := Result{Case: r.c.Name, Phase: p.Name, System: r.sys.Name(), Kind: p.Kind}
	pid := r.sys.Process().Pid()
	before, err := r.fleet.Snapshot(r.prices)
	if err != nil {
		return res, err
	}
	originals, protected := r.fleet.Members(), r.protectedNodes()
	cpu0, err := cpuSeconds(pid)
	if err != nil {
		return res, err
	}
	if err := resetPeakRSS(pid); err != nil {
		return res, err
	}
	start := time.Now()
	if err := r.apply(ctx, p); err != nil {
		return res, err
	}
	res.Pods = r.pods()
	allRunning := func() bool {
		return r.fleet.Running(Namespace) == res.Pods && (p.Kind != Drift || r.noneLeft(originals))
	}
	if err := r.wait(ctx, "every pod Running", allRunning); err != nil {
		return res, err
	}
	res.TimeToRunning = time.Since(start)
	if p.Kind != ScaleOut {
		// The quiet window counts from the phase's change at the earliest: the
		// fleet was quiet before it, and consolidateAfter counts from it.
		settled := func() bool {
			return allRunning() && time.Since(later(r.fleet.LastChange(), start)) >= r.sizes.Quiet
		}
		if err := r.wait(ctx, "the fleet to settle", settled); err != nil {
			return res, err
		}
		res.Settle = max(0, r.fleet.LastChange().Sub(start))
	}
	return r.measure(res, before, start, cpu0, protected)
}

// measure fills in the fleet's and the controller's figures at the phase's end.
func (r *runner) measure(res Result, before Snapshot, start time.Time, cpu0 float64, protected map[string]bool) (Result, error) {
	pid := r.sys.Process().Pid()
	after, err := r.fleet.Snapshot(r.prices)
	if err != nil {
		return res, err
	}
	res.Nodes, res.CPUUtil, res.MemUtil, res.CostPerHour = after.Nodes, after.CPUUtil, after.MemUtil, after.CostPerHour
	if res.settles() {
		res.CostPerHour, res.CostAfter = before.CostPerHour, after.CostPerHour
	}
	members := r.fleet.Members()
	for name := range protected {
		if _, ok := members[name]; ok {
			res.ProtectedNodesKept++
		}
	}
	cpu1, err := cpuSeconds(pid)
	if err != nil {
		return res, err
	}
	res.ControllerCPUSeconds = cpu1 - cpu0
	if res.ControllerPeakRSSMiB, err = peakRSSMiB(pid); err != nil {
		return res, err
	}
	res.Duration = time.Since(start)
	return res, nil
}

// apply creates or scales the phase's workloads, or drifts the pool.
func (r *runner) apply(ctx context.Context, p Phase) error {
	if p.Kind == Drift {
		return r.sys.Drift(ctx, r.bed)
	}
	for _, w := range r.c.Workloads {
		n, ok := p.Replicas[w.Name]
		if !ok {
			continue
		}
		var err error
		if _, exists := r.replicas[w.Name]; exists {
			patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, n)
			err = r.bed.Admin.Patch(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: w.Name}},
				client.RawPatch(types.MergePatchType, []byte(patch)))
		} else {
			err = r.bed.Admin.Create(ctx, w.Deployment(n))
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("setting %s to %d replicas: %w", w.Name, n, err)
		}
		r.replicas[w.Name] = n
	}
	return nil
}

func (r *runner) pods() int {
	n := 0
	for _, v := range r.replicas {
		n += int(v)
	}
	return n
}

// protectedNodes are the fleet's nodes running a do-not-disrupt pod.
func (r *runner) protectedNodes() map[string]bool {
	out := map[string]bool{}
	for _, w := range r.c.Workloads {
		if w.DoNotDisrupt {
			for n := range r.fleet.NodesRunning(Namespace, w.Name) {
				out[n] = true
			}
		}
	}
	return out
}

// noneLeft reports whether no node of originals is still in the fleet.
func (r *runner) noneLeft(originals map[string]time.Time) bool {
	members := r.fleet.Members()
	return !slices.ContainsFunc(keys(originals), func(n string) bool { _, ok := members[n]; return ok })
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func keys(m map[string]time.Time) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// wait polls done every 250 ms until it holds, failing at the sizes'
// timeout or as soon as the controller or a bed component has exited.
func (r *runner) wait(ctx context.Context, what string, done func() bool) error {
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, r.sizes.Timeout, true, func(context.Context) (bool, error) {
		if err := errors.Join(r.sys.Process().Err(), r.bed.Err()); err != nil {
			return false, err
		}
		return done(), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s (%d of %d pods running, %d nodes): %w",
			what, r.fleet.Running(Namespace), r.pods(), len(r.fleet.Members()), err)
	}
	return nil
}

// logTail is the last n lines of a log file.
func logTail(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
