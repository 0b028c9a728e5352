package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// TextWidth is the widest line WriteText prints.
const TextWidth = 100

// textListLimit is how many fallbacks, interruptions or consolidations the
// text summary lists per system; the HTML and JSON reports list them all.
const textListLimit = 10

const (
	labelWidth  = 32
	valueWidth  = 22
	tierWidth   = 12
	tierBlock   = 43 // pods 6, three percentiles of 9, max pending 9, gap 1
	summaryCols = 3
	tierCols    = 2
)

// WriteText writes the terminal summary: headline figures and time to Running
// per tier with systems side by side, then each system's fallbacks,
// interruptions, consolidations and why pods waited. No line is wider than
// TextWidth.
func WriteText(w io.Writer, r *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", fit(fmt.Sprintf("Scenario %s, seed %d: %s from %s, sampled every %s",
		r.Scenario, r.Seed, formatDuration(r.Duration), formatTime(r.Start), formatDuration(r.Step)), TextWidth))
	for i := 0; i < len(r.Systems); i += summaryCols {
		writeSummary(&b, r, i, min(i+summaryCols, len(r.Systems)))
	}
	for i := 0; i < len(r.Systems); i += tierCols {
		writeTiers(&b, r, i, min(i+tierCols, len(r.Systems)))
	}
	for i := range r.Systems {
		writeEvents(&b, r, &r.Systems[i])
	}
	_, err := io.WriteString(w, trimLines(b.String()))
	return err
}

// trimLines drops the spaces column padding leaves at the ends of lines.
func trimLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

func writeSummary(b *strings.Builder, r *Report, from, to int) {
	b.WriteString(pad("", labelWidth))
	for _, s := range r.Systems[from:to] {
		b.WriteString(pad(s.Name, valueWidth))
	}
	b.WriteString("\n")
	for _, rw := range summaryRows(r) {
		b.WriteString(pad(rw.Label, labelWidth))
		for _, v := range rw.Values[from:to] {
			b.WriteString(pad(v, valueWidth))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

func writeTiers(b *strings.Builder, r *Report, from, to int) {
	b.WriteString("Time to Running\n" + pad("", tierWidth))
	for _, s := range r.Systems[from:to] {
		b.WriteString(" " + banner(s.Name, tierBlock-1))
	}
	b.WriteString("\n" + pad("tier", tierWidth))
	for range r.Systems[from:to] {
		fmt.Fprintf(b, "%7s%9s%9s%9s%9s", "pods", "p50", "p95", "p99", "max pend")
	}
	b.WriteString("\n")
	for _, tr := range tierRows(r) {
		b.WriteString(pad(tr.Tier, tierWidth))
		for _, c := range tr.Cells[from:to] {
			fmt.Fprintf(b, "%7s%9s%9s%9s%9s", fit(c.Pods, 6), c.P50, c.P95, c.P99, fit(c.MaxPending, 8))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

func writeEvents(b *strings.Builder, r *Report, s *System) {
	writeList(b, fmt.Sprintf("Fallbacks, %s (%d)", s.Name, len(s.Fallbacks)), len(s.Fallbacks), func(i int) string {
		f := s.Fallbacks[i]
		line := fmt.Sprintf("%s  %s short -> %s", formatOffset(f.At, r.Start), f.Short, f.Chosen)
		if f.FromPool != "" {
			line += " (pool " + f.ToPool + ")"
		}
		return line
	})
	writeList(b, fmt.Sprintf("Interruptions, %s (%d; pods lost %d)", s.Name, len(s.Interruptions), s.PodsLost()), len(s.Interruptions), func(i int) string {
		in := s.Interruptions[i]
		ready := "no replacement Ready"
		if d, ok := in.NoticeToReady(); ok {
			ready = "replacement Ready after " + formatDuration(d)
		}
		return fmt.Sprintf("%s  %s %s, %s, pods lost %d", formatOffset(in.Notice, r.Start), in.Instance.Name, in.Instance.Offering, ready, in.PodsLost)
	})
	writeDisruptions(b, r, s)
	writeZoneOutages(b, r, s)
	writeWaits(b, s)
}

// writeWaits writes why pods waited, grouped and counted: each group's
// counts on one line, its reason wrapped under it.
func writeWaits(b *strings.Builder, s *System) {
	title := fmt.Sprintf("Why pods waited, %s (%d pods never ran or took over %s to run)", s.Name, s.WaitedPods(), formatDuration(LongWait))
	writeList(b, title, len(s.Waits), func(i int) string {
		w := s.Waits[i]
		line := fmt.Sprintf("%d pods, %d never ran, longest %s, e.g. %s: %s", w.Pods, w.NeverRan, formatDuration(w.Longest), fit(w.Example, 40), w.Kind)
		return line + "\n" + strings.Join(wrap(w.Reason, TextWidth-6), "\n")
	})
}

// wrap breaks s into lines of at most width characters, at spaces where it
// can, each but the first indented as writeList's lines are, plus two.
func wrap(s string, width int) []string {
	var out []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
			line += " " + word
		default:
			out, line = append(out, "    "+fit(line, width)), word
		}
	}
	return append(out, "    "+fit(line, width))
}

// writeDisruptions writes the disruption section: what each method did and
// saved, its first commands, and the candidates held back and why.
func writeDisruptions(b *strings.Builder, r *Report, s *System) {
	methods := s.DisruptionsByMethod()
	writeList(b, fmt.Sprintf("Disruptions, %s (%d; %s/h saved)", s.Name, len(s.Consolidations), formatMoney(s.SavingsPerHour())), len(methods), func(i int) string {
		m := methods[i]
		return fmt.Sprintf("%s (%s): %d commands, removed %d, launched %d, saves %s/h", m.Method, orDash(m.Reason), m.Commands, m.Removed,
			m.Launched, formatMoney(m.SavingsPerHour))
	})
	writeList(b, fmt.Sprintf("Disruption commands, %s (%d)", s.Name, len(s.Consolidations)), len(s.Consolidations), func(i int) string {
		c := s.Consolidations[i]
		return fmt.Sprintf("%s  %s: removed %d, launched %d, saves %s/h", formatOffset(c.At, r.Start), c.Method, len(c.Removed), len(c.Replacements), formatMoney(c.SavingsPerHour))
	})
	blocked := s.BlockedByKind()
	writeList(b, fmt.Sprintf("Blocked disruption candidates, %s", s.Name), len(blocked), func(i int) string {
		k := blocked[i]
		return fmt.Sprintf("%s by %s: %d nodes, e.g. %s", k.Method, k.Blocker, k.Nodes, k.Example)
	})
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeList writes a title and up to textListLimit lines, then how many were left out.
func writeList(b *strings.Builder, title string, n int, line func(int) string) {
	if n == 0 {
		return
	}
	b.WriteString(fit(title, TextWidth) + "\n")
	for i := range min(n, textListLimit) {
		for _, l := range strings.Split("  "+line(i), "\n") {
			b.WriteString(fit(l, TextWidth) + "\n")
		}
	}
	if n > textListLimit {
		fmt.Fprintf(b, "  ... %d more in the HTML and JSON reports\n", n-textListLimit)
	}
	b.WriteString("\n")
}

// fit cuts s to at most width characters, marking a cut with "...".
func fit(s string, width int) string {
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	return string([]rune(s)[:width-3]) + "..."
}

// pad fits s into a column of width characters, one of them a trailing space.
func pad(s string, width int) string {
	s = fit(s, width-1)
	return s + strings.Repeat(" ", width-utf8.RuneCountInString(s))
}

// banner centres name in a run of dashes width characters wide.
func banner(name string, width int) string {
	name = " " + fit(name, width-6) + " "
	left := (width - utf8.RuneCountInString(name)) / 2
	right := width - utf8.RuneCountInString(name) - left
	return strings.Repeat("-", left) + name + strings.Repeat("-", right)
}

// writeZoneOutages lists the lost zones: nodes and pods lost, and how long
// until every pod ran again.
func writeZoneOutages(b *strings.Builder, r *Report, s *System) {
	writeList(b, fmt.Sprintf("Zone outages, %s (%d)", s.Name, len(s.ZoneOutages)), len(s.ZoneOutages), func(i int) string {
		z := s.ZoneOutages[i]
		back := "did not come back"
		if !z.Until.IsZero() {
			back = "back at " + formatOffset(z.Until, r.Start)
		}
		ran := "all pods Running again after "
		if d, ok := z.ToAllRunning(); ok {
			ran += formatDuration(d)
		} else if z.PodsLost == 0 {
			ran = "no pod lost"
		} else {
			ran = "pods not all Running again by the end"
		}
		return fmt.Sprintf("%s  %s lost (%s): %d nodes, %d pods lost, %s", formatOffset(z.From, r.Start), z.Zone, back, z.Nodes, z.PodsLost, ran)
	})
}
