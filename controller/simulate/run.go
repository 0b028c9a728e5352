package simulate

import (
	"context"
	"time"
)

// Options tune a run.
type Options struct {
	// Seed overrides the scenario's seed when set.
	Seed *int64
	// CompareCAS also runs the Cluster Autoscaler baseline.
	CompareCAS bool
	// Progress is told how far the run is; nil for none.
	Progress func(system string, done, total time.Duration)
}

// Run replays the scenario with Stowage (and the baseline when asked) and
// returns what each measured.
func Run(ctx context.Context, s *Scenario, opts Options) ([]*systemResult, error) {
	seed := s.Spec.Seed
	if opts.Seed != nil {
		seed = *opts.Seed
	}
	progress := func(name string) func(done, total time.Duration) {
		return func(done, total time.Duration) {
			if opts.Progress != nil {
				opts.Progress(name, done, total)
			}
		}
	}
	w, err := newWorld(s, seed, "stowage")
	if err != nil {
		return nil, err
	}
	if err := run(ctx, w, newStowageSystem(w), progress("stowage")); err != nil {
		return nil, err
	}
	return []*systemResult{w.out}, nil
}
