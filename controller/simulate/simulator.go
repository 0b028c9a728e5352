package simulate

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/simulate/report"
)

// tick bounds a step while something is in motion, so that pods, windows and
// boots interleave as they would.
const tick = time.Second

// system is an autoscaler running in a world.
type system interface {
	// start runs once the world's initial objects exist.
	start(ctx context.Context) error
	// step does the work due at the current instant.
	step(ctx context.Context) error
	// next is when the system next has work.
	next() time.Time
}

// run replays the scenario in w with sys as its autoscaler until the end.
func run(ctx context.Context, w *world, sys system, progress func(done, total time.Duration)) error {
	if err := w.seed(ctx); err != nil {
		return err
	}
	if err := sys.start(ctx); err != nil {
		return err
	}
	end := epoch.Add(w.s.Spec.Duration.Duration)
	sampleEvery := w.s.Spec.SampleEvery.Duration
	if sampleEvery == 0 {
		sampleEvery = time.Minute
	}
	nextSample := epoch
	for !w.clk.Now().After(end) {
		if err := w.stepOnce(ctx, sys); err != nil {
			return fmt.Errorf("at %s: %w", w.elapsed(), err)
		}
		w.observeOutages()
		w.observeInstant()
		if !w.clk.Now().Before(nextSample) {
			w.out.addSample(w.sample())
			nextSample = nextSample.Add(sampleEvery)
		}
		progress(w.elapsed(), w.s.Spec.Duration.Duration)
		w.clk.SetTime(w.nextInstant(sys, nextSample, end))
	}
	w.finish()
	w.observeEnd()
	return nil
}

// stepOnce runs every part of the world once at the current instant.
func (w *world) stepOnce(ctx context.Context, sys system) error {
	w.capacity.apply(w.elapsed())
	w.reclaimBlocks()
	if err := w.applyZoneOutages(ctx); err != nil {
		return err
	}
	// Completed Job pods go first, so that the Job controller replaces them
	// at the same instant, as the real one does.
	for _, f := range []func(context.Context) error{w.finishJobs, w.reconcileWorkloads, w.reapInstances, w.registerNodes} {
		if err := f(ctx); err != nil {
			return err
		}
	}
	if err := w.startPods(); err != nil {
		return err
	}
	if err := w.syncPDBs(ctx); err != nil {
		return err
	}
	if err := w.schedulePods(ctx); err != nil {
		return err
	}
	if err := w.interrupt(); err != nil {
		return err
	}
	return sys.step(ctx)
}

// nextInstant is the next instant anything happens: one tick ahead while pods
// are pending, nodes booting or the system busy, else the next scheduled event.
func (w *world) nextInstant(sys system, nextSample, end time.Time) time.Time {
	now := w.clk.Now()
	candidates := []time.Time{nextSample, end.Add(time.Nanosecond), sys.next()}
	if w.busy() {
		candidates = append(candidates, now.Add(tick))
	}
	for _, in := range w.booting {
		candidates = append(candidates, in.readyAt)
	}
	for _, sp := range w.starting {
		candidates = append(candidates, sp.runningAt)
	}
	for _, sp := range w.finishing {
		candidates = append(candidates, sp.finishAt)
	}
	if t, ok := w.capacity.next(w.elapsed()); ok {
		candidates = append(candidates, epoch.Add(t))
	}
	if t, ok := w.nextWorkloadChange(); ok {
		candidates = append(candidates, epoch.Add(t))
	}
	candidates = append(candidates, w.interruptions.next(), w.emu.NextBlockEvent())
	candidates = append(candidates, w.outageNext()...)
	next := end.Add(time.Nanosecond)
	for _, c := range candidates {
		if c.After(now) && c.Before(next) {
			next = c
		}
	}
	return next
}

// busy reports whether pods wait for a node, or a workload has fewer pods
// than it wants (one was lost after its controller's turn at this instant:
// the controller replaces it at once).
func (w *world) busy() bool {
	if w.unbound > 0 {
		return true
	}
	t := w.elapsed()
	return slices.ContainsFunc(w.workloads, func(ws *workloadState) bool { return len(ws.live) < ws.desired(t) })
}

// nextWorkloadChange is when a replica curve next changes: its next point, or
// one tick ahead inside a ramp.
func (w *world) nextWorkloadChange() (time.Duration, bool) {
	t := w.elapsed()
	var times []time.Duration
	for _, ws := range w.workloads {
		if ws.spec.Job != "" && ws.spec.At.Duration > t {
			times = append(times, ws.spec.At.Duration)
		}
		for _, p := range ws.spec.Replicas {
			switch {
			case p.At.Duration > t:
				times = append(times, p.At.Duration)
			case t < p.At.Duration+p.Over.Duration:
				times = append(times, t+tick)
			}
		}
	}
	if len(times) == 0 {
		return 0, false
	}
	return slices.Min(times), true
}

// sample records the cluster now.
func (w *world) sample() report.Sample {
	s := report.Sample{PendingByTier: map[string]int{}, NodesByInstanceType: map[string]int{}, NodesByZone: map[string]int{},
		NodesByCapacityType: map[string]int{}, PodsByCapacityType: map[string]int{}, CostPerHourByCapacityType: map[string]float64{}}
	capacityOf := map[string]string{} // node name -> capacity type
	for _, ws := range w.workloads {
		s.PendingByTier[ws.tier] += 0
	}
	for _, sp := range w.pods {
		if !sp.running {
			s.PendingByTier[sp.tier]++
		}
	}
	// In id order: a float sum taken in map order differs in its last digit
	// from run to run, and the report must be the same bytes for a seed.
	for _, id := range slices.Sorted(maps.Keys(w.instances)) {
		in := w.instances[id]
		s.NodesByInstanceType[in.instanceType]++
		s.NodesByZone[in.zone]++
		s.NodesByCapacityType[in.capacityType]++
		s.CostPerHour += in.price
		s.CostPerHourByCapacityType[in.capacityType] += in.price
		capacityOf[in.node] = in.capacityType
	}
	if r := w.reservationsPerHour(w.elapsed()); r > 0 {
		s.CostPerHour += r
		s.CostPerHourByCapacityType[v1alpha1.CapacityTypeReserved] += r
	}
	for _, sp := range w.pods {
		if ct, ok := capacityOf[sp.node]; ok && sp.running {
			s.PodsByCapacityType[ct]++
		}
	}
	return s
}

// finish adds the spend of instances still running at the end, and the waits
// of the pods still pending.
func (w *world) finish() {
	for _, sp := range w.sortedPods() {
		if !sp.running {
			w.out.neverRan[sp.tier] = append(w.out.neverRan[sp.tier], w.clk.Since(sp.created))
			w.waited(sp, false, w.clk.Now())
		}
	}
	if w.waits != nil {
		w.out.waits = w.waits.waits.List()
	}
	w.out.zoneOutages = w.outages.results()
	for _, id := range slices.Sorted(maps.Keys(w.instances)) {
		w.out.instanceGone(w.instances[id], w.clk.Now())
	}
	w.out.cost += w.reservationsCost()
}
