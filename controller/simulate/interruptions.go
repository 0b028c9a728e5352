package simulate

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

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
	// open interruptions waiting for their pods to run again, by index in out.interruptions
	open []int
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
}

// next is the earliest pending interruption, or the far future.
func (ix *interruptions) next() time.Time {
	next := epoch.Add(1 << 62)
	for _, t := range ix.at {
		if t.Before(next) {
			next = t
		}
	}
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
			ix.at[in.id] = now
		}
	}
	for _, id := range slices.Sorted(maps.Keys(ix.at)) {
		if now.Before(ix.at[id]) {
			continue
		}
		delete(ix.at, id)
		in, ok := w.instances[id]
		if !ok {
			continue
		}
		if err := w.emu.Interrupt(id); err != nil {
			return fmt.Errorf("interrupting %s: %w", id, err)
		}
		w.terminating[id] = true
		w.out.interruptions = append(w.out.interruptions, interruption{at: w.elapsed(), instance: id,
			offering: offering{in.instanceType, in.zone, in.capacityType}})
		ix.open = append(ix.open, len(w.out.interruptions)-1)
	}
	if len(ix.open) > 0 && !w.busy() && w.allRunning() {
		for _, i := range ix.open {
			if _, alive := w.instances[w.out.interruptions[i].instance]; !alive {
				w.out.interruptions[i].replacement = w.elapsed() - w.out.interruptions[i].at
			}
		}
		ix.open = slices.DeleteFunc(ix.open, func(i int) bool { return w.out.interruptions[i].replacement > 0 })
	}
	return nil
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
	for _, sp := range w.pods {
		if !sp.running {
			return false
		}
	}
	return true
}
