package report

import (
	"fmt"
	"slices"
	"time"
)

// row is one summary line: a label and one value per system.
type row struct {
	Label  string
	Values []string
}

// summaryRows are the headline figures, one column per system, shared by the
// text and HTML renderers.
func summaryRows(r *Report) []row {
	metrics := []struct {
		label string
		value func(s *System) string
	}{
		{"Total cost", func(s *System) string { return formatMoney(s.TotalCost) }},
		{"Peak cost per hour", func(s *System) string { return formatMoney(maxFloat(s.Series.CostPerHour)) + "/h" }},
		{"Peak pending pods", func(s *System) string { return fmt.Sprint(maxInt(s.Series.PendingTotal())) }},
		{"Peak nodes", func(s *System) string { return fmt.Sprint(maxInt(s.Series.NodesTotal())) }},
		{"Nodes launched / terminated", func(s *System) string { return fmt.Sprintf("%d / %d", s.NodesLaunched, s.NodesTerminated) }},
		{"Fallbacks taken", func(s *System) string { return fmt.Sprint(len(s.Fallbacks)) }},
		{"Interruptions / pods lost", func(s *System) string { return fmt.Sprintf("%d / %d", len(s.Interruptions), s.PodsLost()) }},
		{"Slowest replacement Ready", func(s *System) string { return worstNoticeToReady(s) }},
		{"Disruptions / savings", func(s *System) string {
			return fmt.Sprintf("%d / %s/h", len(s.Consolidations), formatMoney(s.SavingsPerHour()))
		}},
		{"Cost per hour at the end", func(s *System) string { return formatMoney(lastFloat(s.Series.CostPerHour)) + "/h" }},
	}
	rows := make([]row, 0, len(metrics))
	for _, m := range metrics {
		rw := row{Label: m.label}
		for i := range r.Systems {
			rw.Values = append(rw.Values, m.value(&r.Systems[i]))
		}
		rows = append(rows, rw)
	}
	return rows
}

func lastFloat(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return v[len(v)-1]
}

// worstNoticeToReady is the longest notice-to-Ready, "never" if a replacement
// never became Ready, "-" without interruptions.
func worstNoticeToReady(s *System) string {
	if len(s.Interruptions) == 0 {
		return "-"
	}
	var worst time.Duration
	for _, i := range s.Interruptions {
		d, ok := i.NoticeToReady()
		if !ok {
			return "never"
		}
		worst = max(worst, d)
	}
	return formatDuration(worst)
}

// tierCell is one system's figures for one tier, formatted.
type tierCell struct {
	Pods, P50, P95, P99, MaxPending string
}

// tierRow is one tier across systems.
type tierRow struct {
	Tier  string
	Cells []tierCell
}

// tierRows lists every tier any system has, sorted by name; a system without
// the tier shows dashes.
func tierRows(r *Report) []tierRow {
	var names []string
	for _, s := range r.Systems {
		for _, t := range s.Tiers {
			names = append(names, t.Name)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	rows := make([]tierRow, 0, len(names))
	for _, name := range names {
		tr := tierRow{Tier: name}
		for _, s := range r.Systems {
			tr.Cells = append(tr.Cells, tierCellOf(s.Tiers, name))
		}
		rows = append(rows, tr)
	}
	return rows
}

func tierCellOf(tiers []Tier, name string) tierCell {
	i := slices.IndexFunc(tiers, func(t Tier) bool { return t.Name == name })
	if i < 0 {
		return tierCell{"-", "-", "-", "-", "-"}
	}
	t := tiers[i]
	l := t.TimeToRunning
	pods := fmt.Sprint(t.PodsStarted)
	if t.PodsNeverRan > 0 {
		pods += fmt.Sprintf("+%d", t.PodsNeverRan)
	}
	return tierCell{pods, formatDuration(l.P50), formatDuration(l.P95), formatDuration(l.P99), fmt.Sprint(t.MaxPending)}
}
