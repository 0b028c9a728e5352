package simulate

import (
	"context"
	"runtime/debug"
	"time"

	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/simulate/report"
)

// System names in the report.
const (
	SystemStowage           = "stowage"
	SystemClusterAutoscaler = "cluster-autoscaler"
	defaultSampleEvery      = time.Minute
)

// Options tune a run.
type Options struct {
	// Seed overrides the scenario's seed when set.
	Seed *int64
	// CompareCAS also runs the Cluster Autoscaler baseline on the same scenario and seed.
	CompareCAS bool
	// Progress is told how far each system's run is; nil for none.
	Progress func(system string, done, total time.Duration)
	// Preferences is the provisioner's preference policy (the default when empty).
	Preferences scheduler.PreferencePolicy
	// Batch, when set, is called as each provisioning batch of the Stowage
	// run starts, and what it returns as the batch ends (benchmarks time
	// the batches with it: the virtual clock cannot).
	Batch func() (done func())
	// observer watches the Stowage run (RunChecked sets it); nil for none.
	observer observer
}

// Run replays the scenario with Stowage, and with the baseline when asked,
// each in a world of its own, and reports both. The same scenario and seed
// give the same report.
func Run(ctx context.Context, s *Scenario, opts Options) (*report.Report, error) {
	// A run is a batch job that allocates briskly (API objects copied and
	// encoded at every write): collecting garbage less often trades a few
	// hundred megabytes for about a quarter of its CPU time.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	seed := s.Spec.Seed
	if opts.Seed != nil {
		seed = *opts.Seed
	}
	step := s.Spec.SampleEvery.Duration
	if step == 0 {
		step = defaultSampleEvery
	}
	rep := &report.Report{Scenario: s.Name, Seed: seed, Start: epoch, Duration: s.Spec.Duration.Duration, Step: step}
	names := []string{SystemStowage}
	if opts.CompareCAS {
		names = append(names, SystemClusterAutoscaler)
	}
	for _, name := range names {
		out, err := runSystem(ctx, s, seed, name, opts)
		if err != nil {
			return nil, err
		}
		rep.Systems = append(rep.Systems, out.system())
	}
	return rep, nil
}

func runSystem(ctx context.Context, s *Scenario, seed int64, name string, opts Options) (*systemResult, error) {
	w, err := newWorld(s, seed, name)
	if err != nil {
		return nil, err
	}
	w.preferences = opts.Preferences
	if name == SystemStowage {
		w.observer, w.batch = opts.observer, opts.Batch
	}
	var sys system
	if name == SystemStowage {
		sys = newStowageSystem(w)
	} else if sys, err = newCASSystem(w); err != nil {
		return nil, err
	}
	err = run(ctx, w, sys, func(done, total time.Duration) {
		if opts.Progress != nil {
			opts.Progress(name, done, total)
		}
	})
	return w.out, err
}
