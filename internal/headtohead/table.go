package headtohead

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Line is one BENCH headtohead line: its fields by name.
type Line map[string]string

// ParseBench reads the `BENCH headtohead=...` lines of a benchmark's output
// (other lines are skipped), in order.
func ParseBench(r io.Reader) ([]Line, error) {
	var out []Line
	s := bufio.NewScanner(r)
	for s.Scan() {
		_, rest, ok := strings.Cut(s.Text(), "BENCH headtohead=")
		if !ok {
			continue
		}
		l := Line{}
		for i, f := range strings.Fields("headtohead=" + rest) {
			k, v, ok := strings.Cut(f, "=")
			if !ok {
				return nil, fmt.Errorf("BENCH line %q: field %d (%q) is not key=value", s.Text(), i+1, f)
			}
			l[k] = v
		}
		out = append(out, l)
	}
	return out, s.Err()
}

func (l Line) num(key string) (float64, bool) {
	v, err := strconv.ParseFloat(l[key], 64)
	return v, err == nil
}

// Page is what the benchmarks page says besides the lines.
type Page struct {
	Machine, Commit, KarpenterVersion, Sizes string
}

// column is one figure of the table: its field, heading, and whether a
// lower value is the better one.
type column struct {
	field, heading string
	lowerIsBetter  bool
}

var columns = []column{
	{"pods", "pods", false},
	{"time_to_running_seconds", "to Running (s)", true},
	{"nodes", "nodes", true},
	{"cost_per_hour", "$/h", true},
	{"cpu_util", "CPU util", false},
	{"mem_util", "mem util", false},
	{"settle_seconds", "settled (s)", true},
	{"cost_after", "$/h settled", true},
	{"controller_cpu_seconds", "controller CPU (s)", true},
	{"controller_peak_rss_mib", "peak RSS (MiB)", true},
}

// compared are the columns whose better value puts a system ahead; nodes
// and pods describe, cost says which fleet is better.
var compared = map[string]bool{"time_to_running_seconds": true, "cpu_util": true, "mem_util": true, "settle_seconds": true,
	"cost_after": true, "controller_cpu_seconds": true, "controller_peak_rss_mib": true}

// Render writes the table of the lines and, phase by phase, every figure in
// which Karpenter did better than Stowage.
func Render(w io.Writer, lines []Line, p Page) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured on %s, at commit %s, against Karpenter %s (its kwok cloud provider), %s.\n\n", p.Machine, p.Commit, p.KarpenterVersion, p.Sizes)
	b.WriteString("| phase | system |")
	for _, c := range columns {
		b.WriteString(" " + c.heading + " |")
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(columns)) + "\n")
	byPhase := map[string]map[string]Line{}
	var order []string
	for _, l := range lines {
		name := l["headtohead"]
		if name == "machine" {
			continue
		}
		if byPhase[name] == nil {
			byPhase[name] = map[string]Line{}
			order = append(order, name)
		}
		byPhase[name][l["system"]] = l
		fmt.Fprintf(&b, "| %s | %s |", name, l["system"])
		for _, c := range columns {
			v := l[c.field]
			if v == "" {
				v = "–"
			}
			b.WriteString(" " + v + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n## Where Karpenter is ahead\n\n")
	ahead := 0
	for _, name := range order {
		k, s := byPhase[name][Karpenter], byPhase[name][Stowage]
		if k == nil || s == nil {
			return fmt.Errorf("phase %s was not measured on both systems", name)
		}
		if wins := karpenterAhead(k, s); len(wins) > 0 {
			fmt.Fprintf(&b, "- **%s**: %s.\n", name, strings.Join(wins, "; "))
			ahead++
		}
	}
	if ahead == 0 {
		b.WriteString("Nowhere in this run.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// karpenterAhead lists the compared figures in which k beats s.
func karpenterAhead(k, s Line) []string {
	var out []string
	for _, c := range columns {
		kv, ok1 := k.num(c.field)
		sv, ok2 := s.num(c.field)
		// A scale-out's $/h is its fleet's; a scale-in's is the fleet it began with.
		scaleOutCost := c.field == "cost_per_hour" && k["settle_seconds"] == ""
		if !ok1 || !ok2 || !(compared[c.field] || scaleOutCost) {
			continue
		}
		if (c.lowerIsBetter && kv < sv) || (!c.lowerIsBetter && kv > sv) {
			out = append(out, fmt.Sprintf("%s %s against Stowage's %s", c.heading, k[c.field], s[c.field]))
		}
	}
	return out
}
