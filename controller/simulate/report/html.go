package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
)

//go:embed html.tmpl
var htmlSource string

var htmlTemplate = template.Must(template.New("report").Parse(htmlSource))

// page is the HTML view of a Report: every value preformatted.
type page struct {
	Scenario              string
	Seed                  int64
	Start, Duration, Step string
	Systems               []string
	Summary               []row
	Tiers                 []tierRow
	Compare               []svgChart
	Sections              []section
}

// section is one system's own charts and event tables.
type section struct {
	Name           string
	Charts         []svgChart
	Fallbacks      [][]string
	Interruptions  [][]string
	ZoneOutages    [][]string
	Consolidations [][]string
	Methods        [][]string
	Blocked        [][]string
	Waits          [][]string
}

// WriteHTML writes a self-contained HTML page: inline CSS, inline SVG charts,
// no JavaScript and no external resources. Every value from the Report is
// escaped. The page is also well-formed XML.
func WriteHTML(w io.Writer, r *Report) error {
	p := page{Scenario: r.Scenario, Seed: r.Seed, Start: formatTime(r.Start), Duration: formatDuration(r.Duration),
		Step: formatDuration(r.Step), Summary: summaryRows(r), Tiers: tierRows(r), Compare: compareCharts(r)}
	for i := range r.Systems {
		s := &r.Systems[i]
		p.Systems = append(p.Systems, s.Name)
		p.Sections = append(p.Sections, systemSection(r, s))
	}
	var b strings.Builder
	if err := htmlTemplate.Execute(&b, p); err != nil {
		return fmt.Errorf("rendering html report: %w", err)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// compareCharts put every system on one chart: pending pods and cost per hour.
func compareCharts(r *Report) []svgChart {
	var pending, cost []series
	for _, s := range r.Systems {
		pending = append(pending, series{Name: s.Name, Values: intsToFloats(s.Series.PendingTotal())})
		cost = append(cost, series{Name: s.Name, Values: s.Series.CostPerHour})
	}
	return []svgChart{
		lineChart("Pending pods", pending, r.Start, r.Step, countAxis),
		lineChart("Cost per hour", cost, r.Start, r.Step, moneyAxis),
	}
}

func systemSection(r *Report, s *System) section {
	sec := section{Name: s.Name}
	for _, c := range []struct {
		title string
		cols  map[string][]int
	}{
		{"Pending pods by tier", s.Series.PendingByTier},
		{"Nodes by instance type", s.Series.NodesByInstanceType},
		{"Nodes by zone", s.Series.NodesByZone},
		{"Nodes by capacity type", s.Series.NodesByCapacityType},
	} {
		sec.Charts = append(sec.Charts, stackedChart(c.title, columns(c.cols), r.Start, r.Step, countAxis))
	}
	for _, f := range s.Fallbacks {
		sec.Fallbacks = append(sec.Fallbacks, []string{formatOffset(f.At, r.Start), f.Short.String(), f.Chosen.String(), f.Reason})
	}
	for _, in := range s.Interruptions {
		ready := "never"
		if d, ok := in.NoticeToReady(); ok {
			ready = formatDuration(d)
		}
		sec.Interruptions = append(sec.Interruptions, []string{formatOffset(in.Notice, r.Start), in.Instance.Name,
			in.Instance.Offering.String(), ready, fmt.Sprint(in.PodsLost)})
	}
	for _, z := range s.ZoneOutages {
		back, ran := "not within the run", "never"
		if !z.Until.IsZero() {
			back = formatOffset(z.Until, r.Start)
		}
		if d, ok := z.ToAllRunning(); ok {
			ran = formatDuration(d)
		}
		sec.ZoneOutages = append(sec.ZoneOutages, []string{formatOffset(z.From, r.Start), z.Zone, back, fmt.Sprint(z.InstancesReturn),
			fmt.Sprint(z.Nodes), fmt.Sprint(z.PodsLost), ran})
	}
	for _, c := range s.Consolidations {
		sec.Consolidations = append(sec.Consolidations, []string{formatOffset(c.At, r.Start), c.Method, orDash(c.Reason),
			instances(c.Removed), instances(c.Replacements), formatMoney(c.SavingsPerHour) + "/h"})
	}
	for _, m := range s.DisruptionsByMethod() {
		sec.Methods = append(sec.Methods, []string{m.Method, orDash(m.Reason), fmt.Sprint(m.Commands), fmt.Sprint(m.Removed),
			fmt.Sprint(m.Launched), formatMoney(m.SavingsPerHour) + "/h"})
	}
	for _, k := range s.BlockedByKind() {
		sec.Blocked = append(sec.Blocked, []string{k.Method, k.Blocker, fmt.Sprint(k.Nodes), k.Example})
	}
	for _, w := range s.Waits {
		sec.Waits = append(sec.Waits, []string{fmt.Sprint(w.Pods), fmt.Sprint(w.NeverRan), formatDuration(w.Longest), w.Kind, w.Reason, w.Example})
	}
	return sec
}

// columns turns a map of columns into series sorted by key.
func columns(cols map[string][]int) []series {
	out := make([]series, 0, len(cols))
	for _, k := range sortedKeys(cols) {
		out = append(out, series{Name: k, Values: intsToFloats(cols[k])})
	}
	return out
}

// instances lists nodes as "name (type/zone/capacity)", comma separated; "-" for none.
func instances(is []Instance) string {
	if len(is) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(is))
	for _, i := range is {
		parts = append(parts, fmt.Sprintf("%s (%s)", i.Name, i.Offering))
	}
	return strings.Join(parts, ", ")
}
