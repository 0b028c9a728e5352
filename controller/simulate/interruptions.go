package simulate

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/stowage-dev/stowage/controller/simulate/report"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

// interruptions schedules spot interruptions: each spot instance draws its
// interruption time at launch from the rate (an exponential wait), and the
// scripted ones hit the oldest running spot instance that matches.
type interruptions struct {
	rate     float64
	scripted []ScriptedInterruption
	fired    []bool
	// instance id -> when it is interrupted
	at map[string]time.Time
	// soonest is the earliest of at (the far future for none) while soonestKnown:
	// every instant asks, and a fleet of thousands of spot instances is too
	// many to look through each time.
	soonest      time.Time
	soonestKnown bool
}

func newInterruptions(s *Scenario) *interruptions {
	return &interruptions{rate: s.Spec.Interruptions.SpotRatePerHour, scripted: s.Spec.Interruptions.Scripted,
		fired: make([]bool, len(s.Spec.Interruptions.Scripted)), at: map[string]time.Time{}}
}

// launched draws a spot instance's interruption time.
func (ix *interruptions) launched(w *world, in *simInstance) {
	if ix.rate <= 0 || in.capacityType != awsemu.CapacitySpot {
		return
	}
	wait := -math.Log(1-w.rng.Float64()) / ix.rate
	ix.at[in.id] = in.launched.Add(time.Duration(wait * float64(time.Hour)))
	if t := ix.at[in.id]; t.Before(ix.earliest()) {
		ix.soonest = t
	}
}

// earliest is the earliest of at, or the far future.
func (ix *interruptions) earliest() time.Time {
	if !ix.soonestKnown {
		ix.soonest, ix.soonestKnown = epoch.Add(1<<62), true
		for _, t := range ix.at {
			if t.Before(ix.soonest) {
				ix.soonest = t
			}
		}
	}
	return ix.soonest
}

// next is the earliest pending interruption, or the far future.
func (ix *interruptions) next() time.Time {
	next := ix.earliest()
	for i, s := range ix.scripted {
		if t := epoch.Add(s.At.Duration); !ix.fired[i] && t.Before(next) {
			next = t
		}
	}
	return next
}

// interrupt raises the interruptions due now, and closes those whose
// displaced pods all run again.
func (w *world) interrupt() error {
	ix, now := w.interruptions, w.clk.Now()
	for i, s := range ix.scripted {
		if ix.fired[i] || now.Before(epoch.Add(s.At.Duration)) {
			continue
		}
		ix.fired[i] = true
		if in := w.oldestSpot(s.InstanceType, s.Zone); in != nil {
			ix.at[in.id], ix.soonestKnown = now, false
		}
	}
	if now.Before(ix.earliest()) {
		w.closeInterruptions()
		return nil
	}
	for _, id := range slices.Sorted(maps.Keys(ix.at)) {
		if now.Before(ix.at[id]) {
			continue
		}
		delete(ix.at, id)
		ix.soonestKnown = false
		in, ok := w.instances[id]
		if cur, known := w.emu.Instance(id); !ok || !known || (cur.State != awsemu.StatePending && cur.State != awsemu.StateRunning) {
			continue // EC2 warns only about instances it runs, not those shutting down
		}
		if err := w.emu.Interrupt(id); err != nil {
			return fmt.Errorf("interrupting %s: %w", id, err)
		}
		w.terminating[id] = true
		w.out.interruptions = append(w.out.interruptions, report.Interruption{Notice: now,
			Instance: report.Instance{Name: id, Offering: offer(in.instanceType, in.zone, in.capacityType)}})
		w.out.openInterruptions = append(w.out.openInterruptions, len(w.out.interruptions)-1)
	}
	w.closeInterruptions()
	return nil
}

// closeInterruptions marks the replacement of every interruption whose
// instance is gone Ready once no pod waits any more.
func (w *world) closeInterruptions() {
	out := w.out
	if len(out.openInterruptions) == 0 || !w.allRunning() {
		return
	}
	out.openInterruptions = slices.DeleteFunc(out.openInterruptions, func(i int) bool {
		if _, alive := w.instances[out.interruptions[i].Instance.Name]; alive {
			return false
		}
		out.interruptions[i].ReplacementReady = w.clk.Now()
		return true
	})
}

// oldestSpot is the longest-running spot instance of a type and zone (any when empty).
func (w *world) oldestSpot(instanceType, zone string) *simInstance {
	for _, in := range w.sortedInstances() {
		if in.capacityType == awsemu.CapacitySpot && (instanceType == "" || in.instanceType == instanceType) &&
			(zone == "" || in.zone == zone) {
			return in
		}
	}
	return nil
}

func (w *world) allRunning() bool {
	if w.unbound > 0 {
		return false
	}
	for _, sp := range w.starting {
		if w.pods[sp.key] == sp {
			return false
		}
	}
	return true
}
