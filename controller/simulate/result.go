package simulate

import (
	"slices"
	"time"

	"github.com/stowage-dev/stowage/controller/simulate/report"
)

// systemResult is what one system's run measured, gathered into the report's
// model as the run goes.
type systemResult struct {
	name string
	// tier -> time from creation to Running of every pod that ran
	toRunning map[string][]time.Duration
	// tier -> how long each pod that never ran waited
	neverRan   map[string][]time.Duration
	maxPending map[string]int
	series     report.Series
	// cost is the spend of instances already gone; live ones are added at the end.
	cost                 float64
	launched, terminated int
	fallbacks            []report.Fallback
	interruptions        []report.Interruption
	consolidations       []report.Consolidation
	blocked              []report.Blocked
	waits                []report.Wait
	zoneOutages          []report.ZoneOutage
	// open interruptions, by index, whose pods have not all run again
	openInterruptions []int
	// actions the autoscaler reported (warnings, scale-ups, backoffs), for the log.
	actions []action
}

// action is one thing an autoscaler did.
type action struct {
	at   time.Duration
	what string
}

func newSystemResult(name string) *systemResult {
	return &systemResult{name: name, toRunning: map[string][]time.Duration{}, neverRan: map[string][]time.Duration{},
		maxPending: map[string]int{}}
}

func (r *systemResult) podRunning(tier string, d time.Duration) {
	r.toRunning[tier] = append(r.toRunning[tier], d)
}

// instanceGone adds a terminated instance's spend.
func (r *systemResult) instanceGone(in *simInstance, now time.Time) {
	r.cost += in.price * now.Sub(in.launched).Hours()
}

// addSample appends one sample and keeps each tier's peak of pending pods.
func (r *systemResult) addSample(s report.Sample) {
	for tier, n := range s.PendingByTier {
		r.maxPending[tier] = max(r.maxPending[tier], n)
	}
	r.series.Append(s)
}

// system renders the result in the report's model.
func (r *systemResult) system() report.System {
	s := report.System{Name: r.name, Series: r.series, TotalCost: r.cost, NodesLaunched: r.launched,
		NodesTerminated: r.terminated, Fallbacks: r.fallbacks, Interruptions: r.interruptions, Consolidations: r.consolidations,
		Blocked: r.blocked, Waits: r.waits, ZoneOutages: r.zoneOutages}
	tiers := slices.Concat(sortedKeys(r.toRunning), sortedKeys(r.neverRan))
	slices.Sort(tiers)
	for _, tier := range slices.Compact(tiers) {
		s.Tiers = append(s.Tiers, report.NewTier(tier, r.toRunning[tier], r.neverRan[tier], r.maxPending[tier]))
	}
	return s
}

// podLost counts a pod that was running when its instance terminated against
// the instance's interruption.
func (r *systemResult) podLost(instance string) {
	for i := range r.interruptions {
		if r.interruptions[i].Instance.Name == instance {
			r.interruptions[i].PodsLost++
			return
		}
	}
}

// noticeOf is when the instance's interruption notice came, if it had one.
func (r *systemResult) noticeOf(instance string) (time.Time, bool) {
	for _, in := range r.interruptions {
		if in.Instance.Name == instance {
			return in.Notice, true
		}
	}
	return time.Time{}, false
}

func offer(instanceType, zone, capacityType string) report.Offering {
	return report.Offering{InstanceType: instanceType, Zone: zone, CapacityType: capacityType}
}
