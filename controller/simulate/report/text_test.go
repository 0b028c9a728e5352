package report_test

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stowage-dev/stowage/controller/simulate/report"
)

func renderText(t *testing.T, r *report.Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := report.WriteText(&b, r); err != nil {
		t.Fatalf("WriteText: %v", err)
	}
	return b.String()
}

func TestTextPutsSystemsSideBySide(t *testing.T) {
	out := renderText(t, sampleReport())
	lines := strings.Split(out, "\n")
	rowOf := func(prefix string) string {
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return l
			}
		}
		t.Fatalf("no line starts with %q in\n%s", prefix, out)
		return ""
	}
	checks := []struct {
		row  string
		want []string // in order along the line
	}{
		{"web ", []string{"400", "41.0s", "1m12s", "1m28s", "120", "400", "6m00s", "8m30s", "9m02s", "340"}},
		{"inference ", []string{"8", "2m10s", "3", "24m03s"}},
		{"Total cost ", []string{"$123.46", "$99.50"}},
		{"Interruptions / pods lost ", []string{"1 / 0", "1 / 3"}},
		{"Cost per hour at the end ", []string{"$1.60/h", "$1.60/h"}},
		{"  single-node (Underutilized)", []string{"1 commands", "removed 1", "launched 1", "saves $0.60/h"}},
		{"  single-node by pdb", []string{"1 nodes", "ip-10-0-2-3: PodDisruptionBudget default/web"}},
		{"Why pods waited, stowage", []string{"4 pods never ran or took over 5m00s to run"}},
		{"  3 pods", []string{"3 never ran", "longest 3h00m00s", "inference/vllm-0", "nodeclass-not-ready"}},
		{"    NodeClass gpu", []string{"is not Ready: ResolutionFailed: no subnet matches its subnetSelectorTerms"}},
	}
	for _, c := range checks {
		line := rowOf(c.row)
		at := 0
		for _, w := range c.want {
			i := strings.Index(line[at:], w)
			if i < 0 {
				t.Errorf("%q: %q missing after column %d in %q", c.row, w, at, line)
				break
			}
			at += i + len(w)
		}
	}
	if !strings.Contains(out, "stowage") || !strings.Contains(out, "cluster-autoscaler") {
		t.Errorf("summary does not name both systems:\n%s", out)
	}
}

func TestTextFitsOneHundredColumns(t *testing.T) {
	r := sampleReport()
	r.Scenario = strings.Repeat("very-long-scenario-name-", 10)
	r.Systems[0].Tiers[0].Name = strings.Repeat("tier", 10)
	r.Systems = append(r.Systems, r.Systems[0], r.Systems[1])
	for i, l := range strings.Split(renderText(t, r), "\n") {
		if n := utf8.RuneCountInString(l); n > report.TextWidth {
			t.Errorf("line %d is %d wide: %q", i+1, n, l)
		}
	}
}

func TestTextListsAtMostTenEvents(t *testing.T) {
	out := renderText(t, sampleReport())
	if n := strings.Count(out, "short -> g5.12xlarge/us-east-1b/on-demand"); n != 10 {
		t.Errorf("listed %d fallbacks, want 10", n)
	}
	if !strings.Contains(out, "... 2 more in the HTML and JSON reports") {
		t.Errorf("no note of the 2 fallbacks left out:\n%s", out)
	}
	if !strings.Contains(out, "no replacement Ready, pods lost 3") {
		t.Errorf("the interruption without replacement is not shown:\n%s", out)
	}
}

func TestTextIsDeterministic(t *testing.T) {
	if a, b := renderText(t, sampleReport()), renderText(t, sampleReport()); a != b {
		t.Fatal("two renders of the same report differ")
	}
}
