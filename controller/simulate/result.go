package simulate

import (
	"slices"
	"time"
)

// systemResult is what one system's run measured.
type systemResult struct {
	name string
	// tier -> time from creation to Running of every pod that ran
	toRunning map[string][]time.Duration
	samples   []sample
	// cost is the spend of instances already gone; live ones are added at the end.
	cost                 float64
	launched, terminated int
	// lost counts pods that were running when their instance terminated.
	lost          int
	fallbacks     []fallback
	interruptions []interruption
	// actions the autoscaler reported (scale-ups, backoffs, scale-downs).
	actions []action
}

// sample is the cluster at one instant.
type sample struct {
	at time.Duration
	// tier -> pods not yet Running
	pending map[string]int
	// "type/zone/capacity-type" -> nodes
	nodes       map[string]int
	costPerHour float64
}

// fallback is a launch that could not have the offering it preferred.
type fallback struct {
	at                                time.Duration
	short, chosen                     offering
	nodeClaim, nodePool, reason, tier string
}

type offering struct {
	InstanceType, Zone, CapacityType string
}

// interruption is a spot interruption and how it was answered.
type interruption struct {
	at          time.Duration
	instance    string
	offering    offering
	replacement time.Duration // until every displaced pod ran again; 0 when not yet
	podsLost    int
}

// action is one thing an autoscaler did, for the report's log.
type action struct {
	at   time.Duration
	what string
}

func newSystemResult(name string) *systemResult {
	return &systemResult{name: name, toRunning: map[string][]time.Duration{}}
}

func (r *systemResult) podRunning(tier string, d time.Duration) {
	r.toRunning[tier] = append(r.toRunning[tier], d)
}

// instanceGone adds a terminated instance's spend.
func (r *systemResult) instanceGone(in *simInstance, now time.Time) {
	r.cost += in.price * now.Sub(in.launched).Hours()
}

// tiers lists the tiers that ran pods, sorted.
func (r *systemResult) tiers() []string {
	out := make([]string, 0, len(r.toRunning))
	for t := range r.toRunning {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}
