package report

import (
	"fmt"
	"time"
)

// Report is the outcome of one simulation run.
type Report struct {
	Scenario string
	Seed     int64
	// Start is the virtual time the run began.
	Start    time.Time
	Duration time.Duration
	// Step is the sampling interval of every System's Series.
	Step time.Duration
	// Systems are shown in this order, e.g. "stowage" then "cluster-autoscaler".
	Systems []System
}

// System is what one autoscaler did over the run.
type System struct {
	Name string
	// Tiers are workload groups (web, inference, ...); renderers match them
	// across systems by name.
	Tiers  []Tier
	Series Series
	// TotalCost is the cost of every node over the run, in dollars.
	TotalCost       float64
	NodesLaunched   int
	NodesTerminated int
	Fallbacks       []Fallback
	Interruptions   []Interruption
	Consolidations  []Consolidation
}

// Tier is the pod start-up record of one workload group.
type Tier struct {
	Name        string
	PodsStarted int
	// PodsNeverRan were deleted while pending or still pending at the end.
	PodsNeverRan int
	// TimeToRunning is from a pod's creation to Running; a pod that never ran
	// counts the time it waited, so that a shortage shows in the percentiles.
	TimeToRunning Latency
	// MaxPending is the most pods of the tier pending at once.
	MaxPending int
}

// Latency holds nearest-rank percentiles of a set of durations.
type Latency struct {
	P50, P95, P99 time.Duration
}

// Offering is one (instance type, zone, capacity type).
type Offering struct {
	InstanceType string
	Zone         string
	CapacityType string
}

// String renders the offering as type/zone/capacity-type, or "none" when empty.
func (o Offering) String() string {
	if o == (Offering{}) {
		return "none"
	}
	return fmt.Sprintf("%s/%s/%s", o.InstanceType, o.Zone, o.CapacityType)
}

// Instance is one node and its offering.
type Instance struct {
	Name string
	Offering
}

// Fallback is a launch that could not use its preferred offering.
type Fallback struct {
	At time.Time
	// Short is the offering the cloud could not supply.
	Short Offering
	// Chosen is what was launched instead; empty when nothing could be.
	Chosen Offering
	// FromPool and ToPool name the NodePools of a fallback to another pool:
	// the claim of FromPool found every offering it allowed short, and its
	// pods launched in ToPool. Both are empty for a fallback within a claim.
	FromPool, ToPool string
	Reason           string
}

// Interruption is a spot interruption (or other notice) of one node.
type Interruption struct {
	Instance Instance
	Notice   time.Time
	// ReplacementReady is when the replacement capacity was Ready; zero if never.
	ReplacementReady time.Time
	// PodsLost counts pods killed before they could be rescheduled; it should be 0.
	PodsLost int
}

// NoticeToReady is the time from notice to replacement Ready, and false when
// no replacement became Ready.
func (i Interruption) NoticeToReady() (time.Duration, bool) {
	if i.ReplacementReady.IsZero() {
		return 0, false
	}
	return i.ReplacementReady.Sub(i.Notice), true
}

// Consolidation is one disruption that removed or replaced nodes to save money.
type Consolidation struct {
	At time.Time
	// Method is the deciding method, e.g. "emptiness", "single-node", "multi-node".
	Method       string
	Removed      []Instance
	Replacements []Instance
	// SavingsPerHour is the removed nodes' price minus the replacements', in dollars.
	SavingsPerHour float64
}

// SavingsPerHour is the sum of the consolidations' hourly savings.
func (s *System) SavingsPerHour() float64 {
	var total float64
	for _, c := range s.Consolidations {
		total += c.SavingsPerHour
	}
	return total
}

// PodsLost is the sum of pods lost to interruptions.
func (s *System) PodsLost() int {
	var total int
	for _, i := range s.Interruptions {
		total += i.PodsLost
	}
	return total
}
