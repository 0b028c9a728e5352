package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stowage-dev/stowage/controller/simulate/report"
)

func TestProgressIsSilentOffATerminal(t *testing.T) {
	var b bytes.Buffer
	p := report.NewProgress(&b, "simulating", 100)
	for i := range int64(101) {
		if err := p.Update(i); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Done(); err != nil {
		t.Fatal(err)
	}
	if b.Len() != 0 || report.IsTerminal(&b) {
		t.Fatalf("wrote %q to a buffer", b.String())
	}
}

func TestProgressDisabled(t *testing.T) {
	var b bytes.Buffer
	p := report.NewProgress(&b, "simulating", 10, report.ProgressEnabled(false))
	_ = p.Update(5)
	_ = p.Done()
	if b.Len() != 0 {
		t.Fatalf("a disabled bar wrote %q", b.String())
	}
}

func TestProgressRedrawsOnlyWhenThePercentChanges(t *testing.T) {
	var b bytes.Buffer
	p := report.NewProgress(&b, "simulating", 1000, report.ProgressEnabled(true))
	for i := range int64(1001) {
		if err := p.Update(i); err != nil {
			t.Fatal(err)
		}
	}
	_ = p.Update(1000)
	if err := p.Done(); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if n := strings.Count(out, "\r"); n != 101 {
		t.Errorf("%d redraws, want 101 (0%% to 100%%)", n)
	}
	last := out[strings.LastIndex(out, "\r"):]
	if last != "\rsimulating ["+strings.Repeat("#", 40)+"] 100%\n" {
		t.Errorf("final draw %q", last)
	}
	for _, frame := range strings.Split(strings.TrimSuffix(out, "\n"), "\r")[1:] {
		if len(frame) > 100 {
			t.Errorf("frame %q is wider than 100 columns", frame)
		}
	}
}

func TestProgressDoneWithoutDrawingPrintsNothing(t *testing.T) {
	var b bytes.Buffer
	if err := report.NewProgress(&b, "x", 10, report.ProgressEnabled(true)).Done(); err != nil || b.Len() != 0 {
		t.Fatalf("Done on an undrawn bar wrote %q (%v)", b.String(), err)
	}
}
