package scenariogen

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/simulate"
)

// Options size the scenarios Generate writes; zero fields take the defaults.
type Options struct {
	// MaxPods bounds the workloads' pods alive at once, at the peaks of every
	// curve together; 120 when zero.
	MaxPods int
	// MaxDuration bounds the virtual time replayed; 90m when zero.
	MaxDuration time.Duration
}

func (o Options) withDefaults() Options {
	if o.MaxPods <= 0 {
		o.MaxPods = 120
	}
	if o.MaxDuration <= 0 {
		o.MaxDuration = 90 * time.Minute
	}
	return o
}

// gen is one scenario being written from one seed's draws.
type gen struct {
	rng   *rand.Rand
	o     Options
	s     *simulate.Scenario
	cat   *catalogueIndex
	zones []string
	pools []*poolPlan
	// pods is what the workloads written so far may run at once.
	pods int
}

// Generate writes the scenario of a seed. The same seed and options give the
// same scenario; every scenario passes simulate.ReadScenario once written
// (Marshal).
func Generate(seed int64, o Options) *simulate.Scenario {
	o = o.withDefaults()
	g := &gen{rng: rand.New(rand.NewPCG(uint64(seed), 0x73636e67656e)), o: o, cat: builtin()} //nolint:gosec // a seed's bits
	g.s = &simulate.Scenario{Name: fmt.Sprintf("gen-%d", seed)}
	sp := &g.s.Spec
	sp.Seed = seed
	sp.Duration = dur(time.Duration(20+g.rng.IntN(int(o.MaxDuration/time.Minute)-19)) * time.Minute)
	g.zones = []string{"us-east-1a", "us-east-1b", "us-east-1c"}
	if g.chance(0.25) {
		g.zones = g.zones[:2]
		sp.Zones = slices.Clone(g.zones)
	}
	g.timing()
	g.nodeClasses()
	for i := range 1 + g.rng.IntN(4) {
		g.pool(i)
	}
	for i := range 1 + g.rng.IntN(5) {
		g.workload(i, i == 0)
	}
	g.daemonSets()
	g.shortages()
	g.interruptions()
	return g.s
}

// timing draws the boot and pod start-up times.
func (g *gen) timing() {
	sp := &g.s.Spec
	if g.chance(0.6) {
		sp.Boot = map[string]simulate.DurationRange{}
		for _, family := range []string{"al2023", "bottlerocket"} {
			lo := time.Duration(20+g.rng.IntN(60)) * time.Second
			sp.Boot[family] = simulate.DurationRange{Min: dur(lo), Max: dur(lo + time.Duration(g.rng.IntN(60))*time.Second)}
		}
	}
	if g.chance(0.7) {
		lo := time.Duration(g.rng.IntN(5)) * time.Second
		sp.PodStartup = simulate.DurationRange{Min: dur(lo), Max: dur(lo + time.Duration(g.rng.IntN(15))*time.Second)}
	}
}

// catalogueIndex is the built-in catalogue, read once: the facts and the
// labels of every type, by name.
type catalogueIndex struct {
	names  []string
	infos  map[string]catalogue.Info
	labels map[string]map[string]string
}

var builtin = sync.OnceValue(func() *catalogueIndex {
	c := &catalogueIndex{infos: map[string]catalogue.Info{}, labels: map[string]map[string]string{}}
	for _, info := range catalogue.Builtin() {
		c.names = append(c.names, info.Name)
		c.infos[info.Name] = info
		// The zone and capacity type are left open: pools are matched on the rest.
		c.labels[info.Name] = catalogue.Requirements(info, "us-east-1", nil).Labels()
	}
	slices.Sort(c.names)
	return c
})

func (g *gen) chance(p float64) bool { return g.rng.Float64() < p }

func pick[T any](g *gen, xs []T) T { return xs[g.rng.IntN(len(xs))] }

// some picks between lo and hi distinct elements of xs, in xs's order.
func some[T any](g *gen, xs []T, lo, hi int) []T {
	n := min(len(xs), lo+g.rng.IntN(hi-lo+1))
	idx := g.rng.Perm(len(xs))[:n]
	slices.Sort(idx)
	out := make([]T, n)
	for i, j := range idx {
		out[i] = xs[j]
	}
	return out
}

// within draws a time in [lo, hi), on whole seconds.
func (g *gen) within(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(g.rng.Int64N(int64((hi-lo)/time.Second)))*time.Second
}

func dur(d time.Duration) metav1.Duration { return metav1.Duration{Duration: d} }
