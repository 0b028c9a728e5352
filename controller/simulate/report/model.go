package report

import (
	"cmp"
	"fmt"
	"slices"
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
	// Blocked are the candidates a disruption method wanted but could not
	// disrupt, each time its blocker first appeared or changed.
	Blocked []Blocked
	// Waits say why pods waited: every pod that never ran or took longer
	// than LongWait to run, grouped by what held it back, most pods first.
	Waits []Wait
	// ZoneOutages are the scenario's lost zones and what each cost.
	ZoneOutages []ZoneOutage
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

// Consolidation is one disruption that removed or replaced nodes: to save
// money (emptiness, consolidation, a Cluster Autoscaler scale-down) or to
// renew them (drift, expiry).
type Consolidation struct {
	At time.Time
	// Method is the deciding method, e.g. "emptiness", "single-node",
	// "multi-node", "drift", "expiration", "scale-down".
	Method string
	// Reason is the disruption reason: Empty, Underutilized, Drifted or
	// Expired; empty for a Cluster Autoscaler scale-down.
	Reason       string
	Removed      []Instance
	Replacements []Instance
	// SavingsPerHour is the removed nodes' price minus the replacements', in
	// dollars; 0 for drift and expiry, which renew nodes rather than save.
	SavingsPerHour float64
}

// Blocked is a node a disruption method wanted but could not disrupt.
type Blocked struct {
	At time.Time
	// Method is the method, Blocker the kind of block (do-not-disrupt, pdb,
	// nominated, just-ready, budget, unschedulable, churn).
	Method, Blocker string
	Node            string
	// Why is the block in words.
	Why string
}

// SavingsPerHour is the sum of the consolidations' hourly savings.
func (s *System) SavingsPerHour() float64 {
	var total float64
	for _, c := range s.Consolidations {
		total += c.SavingsPerHour
	}
	return total
}

// MethodSummary is what one disruption method did over a run.
type MethodSummary struct {
	Method, Reason    string
	Commands          int
	Removed, Launched int
	SavingsPerHour    float64
}

// DisruptionsByMethod sums the consolidations by method, sorted by method.
func (s *System) DisruptionsByMethod() []MethodSummary {
	byMethod := map[string]*MethodSummary{}
	var names []string
	for _, c := range s.Consolidations {
		m, ok := byMethod[c.Method]
		if !ok {
			m = &MethodSummary{Method: c.Method, Reason: c.Reason}
			byMethod[c.Method] = m
			names = append(names, c.Method)
		}
		m.Commands++
		m.Removed += len(c.Removed)
		m.Launched += len(c.Replacements)
		m.SavingsPerHour += c.SavingsPerHour
	}
	slices.Sort(names)
	out := make([]MethodSummary, 0, len(names))
	for _, n := range names {
		out = append(out, *byMethod[n])
	}
	return out
}

// BlockedSummary counts the nodes one blocker held back from one method.
type BlockedSummary struct {
	Method, Blocker string
	// Nodes counts the distinct nodes; Example is one of them and why.
	Nodes   int
	Example string
}

// BlockedByKind sums the blocked candidates by method and blocker, sorted.
func (s *System) BlockedByKind() []BlockedSummary {
	type key struct{ method, blocker string }
	nodes, examples := map[key]map[string]bool{}, map[key]string{}
	var keys []key
	for _, b := range s.Blocked {
		k := key{b.Method, b.Blocker}
		if nodes[k] == nil {
			nodes[k], examples[k] = map[string]bool{}, b.Node+": "+b.Why
			keys = append(keys, k)
		}
		nodes[k][b.Node] = true
	}
	slices.SortFunc(keys, func(a, b key) int { return cmp.Or(cmp.Compare(a.method, b.method), cmp.Compare(a.blocker, b.blocker)) })
	out := make([]BlockedSummary, 0, len(keys))
	for _, k := range keys {
		out = append(out, BlockedSummary{Method: k.method, Blocker: k.blocker, Nodes: len(nodes[k]), Example: examples[k]})
	}
	return out
}

// PodsLost is the sum of pods lost to interruptions.
func (s *System) PodsLost() int {
	var total int
	for _, i := range s.Interruptions {
		total += i.PodsLost
	}
	return total
}
