package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// SchemaVersion is the version of the JSON document WriteJSON writes; it
// changes when a field changes meaning or goes away (docs/guides/simulate-report.md).
const SchemaVersion = 1

// Rounding of JSON numbers: dollars to 1/100 cent, seconds to the millisecond.
const (
	moneyPlaces   = 4
	secondsPlaces = 3
)

type jsonReport struct {
	SchemaVersion   int          `json:"schema_version"`
	Scenario        string       `json:"scenario"`
	Seed            int64        `json:"seed"`
	Start           string       `json:"start"`
	DurationSeconds float64      `json:"duration_seconds"`
	StepSeconds     float64      `json:"step_seconds"`
	Systems         []jsonSystem `json:"systems"`
}

type jsonSystem struct {
	Name            string              `json:"name"`
	TotalCost       float64             `json:"total_cost_usd"`
	NodesLaunched   int                 `json:"nodes_launched"`
	NodesTerminated int                 `json:"nodes_terminated"`
	SavingsPerHour  float64             `json:"consolidation_savings_usd_per_hour"`
	PodsLost        int                 `json:"pods_lost"`
	Tiers           []jsonTier          `json:"tiers"`
	Series          jsonSeries          `json:"series"`
	Fallbacks       []jsonFallback      `json:"fallbacks"`
	Interruptions   []jsonInterruption  `json:"interruptions"`
	Consolidations  []jsonConsolidation `json:"consolidations"`
	Blocked         []jsonBlocked       `json:"blocked"`
	Waits           []jsonWait          `json:"waits"`
	ZoneOutages     []jsonZoneOutage    `json:"zone_outages"`
}

type jsonZoneOutage struct {
	Zone            string   `json:"zone"`
	From            string   `json:"from"`
	Until           *string  `json:"until"`
	InstancesReturn bool     `json:"instances_return"`
	Nodes           int      `json:"nodes"`
	PodsLost        int      `json:"pods_lost"`
	ToAllRunning    *float64 `json:"to_all_running_seconds"`
}

type jsonWait struct {
	Kind           string  `json:"kind"`
	Reason         string  `json:"reason"`
	Pods           int     `json:"pods"`
	NeverRan       int     `json:"never_ran"`
	LongestSeconds float64 `json:"longest_seconds"`
	Example        string  `json:"example"`
}

type jsonTier struct {
	Name          string      `json:"name"`
	PodsStarted   int         `json:"pods_started"`
	PodsNeverRan  int         `json:"pods_never_ran"`
	TimeToRunning jsonLatency `json:"time_to_running"`
	MaxPending    int         `json:"max_pending"`
}

type jsonLatency struct {
	P50 float64 `json:"p50_seconds"`
	P95 float64 `json:"p95_seconds"`
	P99 float64 `json:"p99_seconds"`
}

type jsonSeries struct {
	PendingByTier       map[string][]int `json:"pending_by_tier"`
	NodesByInstanceType map[string][]int `json:"nodes_by_instance_type"`
	NodesByZone         map[string][]int `json:"nodes_by_zone"`
	NodesByCapacityType map[string][]int `json:"nodes_by_capacity_type"`
	PodsByCapacityType  map[string][]int `json:"pods_by_capacity_type"`
	CostPerHour         []float64        `json:"cost_usd_per_hour"`
	// capacity type -> cost per hour
	CostPerHourByCapacityType map[string][]float64 `json:"cost_usd_per_hour_by_capacity_type"`
}

type jsonOffering struct {
	InstanceType string `json:"instance_type"`
	Zone         string `json:"zone"`
	CapacityType string `json:"capacity_type"`
}

type jsonInstance struct {
	Name string `json:"name"`
	jsonOffering
}

type jsonFallback struct {
	At       string        `json:"at"`
	Short    jsonOffering  `json:"short"`
	Chosen   *jsonOffering `json:"chosen"`
	FromPool string        `json:"from_nodepool,omitempty"`
	ToPool   string        `json:"to_nodepool,omitempty"`
	Reason   string        `json:"reason"`
}

type jsonInterruption struct {
	Instance         jsonInstance `json:"instance"`
	Notice           string       `json:"notice"`
	ReplacementReady *string      `json:"replacement_ready"`
	NoticeToReady    *float64     `json:"notice_to_ready_seconds"`
	PodsLost         int          `json:"pods_lost"`
}

type jsonConsolidation struct {
	At             string         `json:"at"`
	Method         string         `json:"method"`
	Reason         string         `json:"reason"`
	Removed        []jsonInstance `json:"removed"`
	Replacements   []jsonInstance `json:"replacements"`
	SavingsPerHour float64        `json:"savings_usd_per_hour"`
}

type jsonBlocked struct {
	At      string `json:"at"`
	Method  string `json:"method"`
	Blocker string `json:"blocker"`
	Node    string `json:"node"`
	Why     string `json:"why"`
}

// WriteJSON writes the report as one indented JSON document, schema in
// docs/guides/simulate-report.md. Object keys of maps come out sorted, times in UTC
// RFC 3339, and numbers rounded (dollars to 4 places, seconds to 3).
func WriteJSON(w io.Writer, r *Report) error {
	doc := jsonReport{SchemaVersion: SchemaVersion, Scenario: r.Scenario, Seed: r.Seed, Start: formatTime(r.Start),
		DurationSeconds: seconds(r.Duration), StepSeconds: seconds(r.Step), Systems: make([]jsonSystem, 0, len(r.Systems))}
	for i := range r.Systems {
		doc.Systems = append(doc.Systems, toJSONSystem(&r.Systems[i]))
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding json report: %w", err)
	}
	_, err = w.Write(append(compactNumberArrays(out), '\n'))
	return err
}

// compactNumberArrays puts every array of plain numbers on one line, so that
// a day of samples is one line per column rather than one per sample.
func compactNumberArrays(b []byte) []byte {
	out := make([]byte, 0, len(b))
	inString, escaped := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString:
			inString = !(c == '"' && !escaped)
			escaped = c == '\\' && !escaped
		case c == '"':
			inString = true
		case c == '[':
			if end := numberArrayEnd(b, i); end > 0 {
				out = append(out, bytes.Join(bytes.Fields(b[i:end+1]), nil)...)
				i = end
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

// numberArrayEnd returns the index of the ']' closing the array opening at
// b[start] when it holds only numbers, and -1 otherwise.
func numberArrayEnd(b []byte, start int) int {
	for i := start + 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == ']':
			return i
		case !bytes.ContainsRune([]byte("0123456789-+.eE, \n\t"), rune(c)):
			return -1
		}
	}
	return -1
}

func toJSONSystem(s *System) jsonSystem {
	js := jsonSystem{Name: s.Name, TotalCost: round(s.TotalCost, moneyPlaces), NodesLaunched: s.NodesLaunched,
		NodesTerminated: s.NodesTerminated, SavingsPerHour: round(s.SavingsPerHour(), moneyPlaces), PodsLost: s.PodsLost(),
		Tiers: make([]jsonTier, 0, len(s.Tiers)), Series: toJSONSeries(&s.Series),
		Fallbacks: make([]jsonFallback, 0, len(s.Fallbacks)), Interruptions: make([]jsonInterruption, 0, len(s.Interruptions)),
		Consolidations: make([]jsonConsolidation, 0, len(s.Consolidations)), Blocked: make([]jsonBlocked, 0, len(s.Blocked)),
		Waits: make([]jsonWait, 0, len(s.Waits)), ZoneOutages: make([]jsonZoneOutage, 0, len(s.ZoneOutages))}
	for _, z := range s.ZoneOutages {
		js.ZoneOutages = append(js.ZoneOutages, toJSONZoneOutage(z))
	}
	for _, w := range s.Waits {
		js.Waits = append(js.Waits, jsonWait{Kind: w.Kind, Reason: w.Reason, Pods: w.Pods, NeverRan: w.NeverRan,
			LongestSeconds: seconds(w.Longest), Example: w.Example})
	}
	for _, b := range s.Blocked {
		js.Blocked = append(js.Blocked, jsonBlocked{At: formatTime(b.At), Method: b.Method, Blocker: b.Blocker, Node: b.Node, Why: b.Why})
	}
	for _, t := range s.Tiers {
		l := t.TimeToRunning
		js.Tiers = append(js.Tiers, jsonTier{Name: t.Name, PodsStarted: t.PodsStarted, PodsNeverRan: t.PodsNeverRan, MaxPending: t.MaxPending,
			TimeToRunning: jsonLatency{P50: seconds(l.P50), P95: seconds(l.P95), P99: seconds(l.P99)}})
	}
	for _, f := range s.Fallbacks {
		jf := jsonFallback{At: formatTime(f.At), Short: toJSONOffering(f.Short), FromPool: f.FromPool, ToPool: f.ToPool, Reason: f.Reason}
		if f.Chosen != (Offering{}) {
			chosen := toJSONOffering(f.Chosen)
			jf.Chosen = &chosen
		}
		js.Fallbacks = append(js.Fallbacks, jf)
	}
	for _, in := range s.Interruptions {
		js.Interruptions = append(js.Interruptions, toJSONInterruption(in))
	}
	for _, c := range s.Consolidations {
		js.Consolidations = append(js.Consolidations, jsonConsolidation{At: formatTime(c.At), Method: c.Method, Reason: c.Reason,
			Removed: toJSONInstances(c.Removed), Replacements: toJSONInstances(c.Replacements), SavingsPerHour: round(c.SavingsPerHour, moneyPlaces)})
	}
	return js
}

func toJSONSeries(s *Series) jsonSeries {
	byCapacity := map[string][]float64{}
	for ct, col := range s.CostPerHourByCapacityType {
		byCapacity[ct] = roundMoney(col)
	}
	return jsonSeries{PendingByTier: nonNil(s.PendingByTier), NodesByInstanceType: nonNil(s.NodesByInstanceType),
		NodesByZone: nonNil(s.NodesByZone), NodesByCapacityType: nonNil(s.NodesByCapacityType),
		PodsByCapacityType: nonNil(s.PodsByCapacityType), CostPerHour: roundMoney(s.CostPerHour), CostPerHourByCapacityType: byCapacity}
}

func roundMoney(col []float64) []float64 {
	out := make([]float64, 0, len(col))
	for _, c := range col {
		out = append(out, round(c, moneyPlaces))
	}
	return out
}

func toJSONInterruption(in Interruption) jsonInterruption {
	ji := jsonInterruption{Instance: toJSONInstance(in.Instance), Notice: formatTime(in.Notice), PodsLost: in.PodsLost}
	if d, ok := in.NoticeToReady(); ok {
		ready, secs := formatTime(in.ReplacementReady), seconds(d)
		ji.ReplacementReady, ji.NoticeToReady = &ready, &secs
	}
	return ji
}

func toJSONOffering(o Offering) jsonOffering { return jsonOffering(o) }

func toJSONInstance(i Instance) jsonInstance {
	return jsonInstance{Name: i.Name, jsonOffering: toJSONOffering(i.Offering)}
}

func toJSONInstances(is []Instance) []jsonInstance {
	out := make([]jsonInstance, 0, len(is))
	for _, i := range is {
		out = append(out, toJSONInstance(i))
	}
	return out
}

// nonNil makes an absent map encode as {} rather than null; columns are
// copied so that none encodes as null.
func nonNil(cols map[string][]int) map[string][]int {
	out := make(map[string][]int, len(cols))
	for k, v := range cols {
		if v == nil {
			v = []int{}
		}
		out[k] = v
	}
	return out
}

func seconds(d time.Duration) float64 { return round(d.Seconds(), secondsPlaces) }

func toJSONZoneOutage(z ZoneOutage) jsonZoneOutage {
	jz := jsonZoneOutage{Zone: z.Zone, From: formatTime(z.From), InstancesReturn: z.InstancesReturn, Nodes: z.Nodes, PodsLost: z.PodsLost}
	if !z.Until.IsZero() {
		until := formatTime(z.Until)
		jz.Until = &until
	}
	if d, ok := z.ToAllRunning(); ok {
		secs := seconds(d)
		jz.ToAllRunning = &secs
	}
	return jz
}
