package report_test

import (
	"fmt"
	"time"

	"github.com/stowage-dev/stowage/controller/simulate/report"
)

var start = time.Date(2026, 8, 25, 2, 0, 0, 0, time.UTC)

// sampleReport is the 2 AM spike's shape: Stowage falls back off the short
// g5.12xlarge offering, the Cluster Autoscaler model waits.
func sampleReport() *report.Report {
	return &report.Report{
		Scenario: "2am-spike", Seed: 42, Start: start, Duration: time.Hour, Step: time.Minute,
		Systems: []report.System{stowage(), clusterAutoscaler()},
	}
}

func stowage() report.System {
	s := report.System{Name: "stowage", TotalCost: 123.456789, NodesLaunched: 14, NodesTerminated: 6,
		Tiers: []report.Tier{
			{Name: "inference", PodsStarted: 8, TimeToRunning: report.Latency{P50: 95 * time.Second, P95: 130 * time.Second, P99: 141 * time.Second}, MaxPending: 8},
			{Name: "web", PodsStarted: 400, TimeToRunning: report.Latency{P50: 41 * time.Second, P95: 72 * time.Second, P99: 88 * time.Second}, MaxPending: 120},
		}}
	short := report.Offering{InstanceType: "g5.12xlarge", Zone: "us-east-1a", CapacityType: "on-demand"}
	for i := range 12 {
		s.Fallbacks = append(s.Fallbacks, report.Fallback{At: start.Add(time.Duration(i) * time.Minute), Short: short,
			Chosen: report.Offering{InstanceType: "g5.12xlarge", Zone: "us-east-1b", CapacityType: "on-demand"}, Reason: "InsufficientInstanceCapacity"})
	}
	s.Interruptions = []report.Interruption{{
		Instance: report.Instance{Name: "ip-10-0-1-7", Offering: report.Offering{InstanceType: "m6i.xlarge", Zone: "us-east-1b", CapacityType: "spot"}},
		Notice:   start.Add(30 * time.Minute), ReplacementReady: start.Add(31*time.Minute + 10*time.Second),
	}}
	s.Blocked = []report.Blocked{{At: start.Add(45 * time.Minute), Method: "single-node", Blocker: "pdb", Node: "ip-10-0-2-3",
		Why: "PodDisruptionBudget default/web allows no disruption of pod default/web-1 now"}}
	s.ZoneOutages = []report.ZoneOutage{{Zone: "us-east-1a", From: start.Add(20 * time.Minute), Nodes: 4, PodsLost: 37,
		AllRunning: start.Add(40*time.Minute + 30*time.Second)}}
	var waits report.Waits
	for i := range 3 {
		waits.Add(report.WaitNodeClassNotReady, "NodeClass gpu is not Ready: ResolutionFailed: no subnet matches its subnetSelectorTerms",
			fmt.Sprintf("inference/vllm-%d", i), time.Duration(i+1)*time.Hour, false)
	}
	waits.Add(report.WaitShortage, "every offering nodeclaim gpu-x allows is short", "inference/vllm-9", 6*time.Minute, true)
	s.Waits = waits.List()
	s.Consolidations = []report.Consolidation{{At: start.Add(50 * time.Minute), Method: "single-node", Reason: "Underutilized",
		Removed:        []report.Instance{{Name: "ip-10-0-2-9", Offering: report.Offering{InstanceType: "m6i.4xlarge", Zone: "us-east-1b", CapacityType: "on-demand"}}},
		Replacements:   []report.Instance{{Offering: report.Offering{InstanceType: "m6i.xlarge", Zone: "us-east-1b", CapacityType: "spot"}}},
		SavingsPerHour: 0.6}}
	fill(&s.Series, 60, map[string]string{"web": "c6i.xlarge", "inference": "g5.12xlarge"}, []string{"us-east-1b"}, 1)
	return s
}

func clusterAutoscaler() report.System {
	s := report.System{Name: "cluster-autoscaler", TotalCost: 99.5, NodesLaunched: 9, NodesTerminated: 2,
		Tiers: []report.Tier{
			{Name: "inference", PodsStarted: 3, TimeToRunning: report.Latency{P50: 21 * time.Minute, P95: 24*time.Minute + 3*time.Second, P99: 25 * time.Minute}, MaxPending: 8},
			{Name: "web", PodsStarted: 400, TimeToRunning: report.Latency{P50: 6 * time.Minute, P95: 8*time.Minute + 30*time.Second, P99: 9*time.Minute + 2*time.Second}, MaxPending: 340},
		}}
	s.Interruptions = []report.Interruption{{
		Instance: report.Instance{Name: "ip-10-0-3-1", Offering: report.Offering{InstanceType: "c6i.xlarge", Zone: "us-east-1a", CapacityType: "spot"}},
		Notice:   start.Add(40 * time.Minute), PodsLost: 3,
	}}
	fill(&s.Series, 60, map[string]string{"web": "c6i.xlarge", "inference": "g5.12xlarge"}, []string{"us-east-1a", "us-east-1b"}, 3)
	return s
}

// fill appends n samples of a spike that peaks in the middle.
func fill(s *report.Series, n int, typeOf map[string]string, zones []string, scale int) {
	for i := range n {
		level := min(i, n-i)
		sm := report.Sample{PendingByTier: map[string]int{}, NodesByInstanceType: map[string]int{}, NodesByZone: map[string]int{},
			NodesByCapacityType: map[string]int{"on-demand": 2 + level/4}, CostPerHour: 1.5 + 0.1*float64(level),
			PodsByCapacityType: map[string]int{"on-demand": 3 * level}, CostPerHourByCapacityType: map[string]float64{"on-demand": 1.5 + 0.1*float64(level)}}
		for tier, it := range typeOf {
			sm.PendingByTier[tier] = level * scale / 2
			sm.NodesByInstanceType[it] = 1 + level/8
		}
		for j, z := range zones {
			sm.NodesByZone[z] = 1 + level/(4*(j+1))
		}
		s.Append(sm)
	}
}

// hostile is a report whose every free-text field tries to break out of its markup.
func hostile() *report.Report {
	r := sampleReport()
	r.Scenario = `<script>alert("x")</script>`
	r.Systems[0].Name = `stow"age<b>`
	r.Systems[0].Tiers[0].Name = `a&b<i>`
	r.Systems[0].Fallbacks[0].Reason = `</td><script>alert(1)</script>`
	r.Systems[0].Series.PendingByTier[`<svg onload=alert(1)>`] = make([]int, 60)
	return r
}
