package report_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stowage-dev/stowage/controller/simulate/report"
)

func renderHTML(t *testing.T, r *report.Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := report.WriteHTML(&b, r); err != nil {
		t.Fatalf("WriteHTML: %v", err)
	}
	return b.String()
}

// figure is one chart as parsed back: its caption and its series, in order.
type figure struct {
	caption string
	series  []string
	paths   []string
}

// parsed is what the tests read back from the page.
type parsed struct {
	figures  []figure
	elements map[string]int
	texts    []string
	attrs    []xml.Attr
}

// parseXHTML reads the page with a strict XML decoder, which fails on any
// unclosed, misnested or unknown-entity markup.
func parseXHTML(t *testing.T, page string) parsed {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(page))
	d.Strict = true
	p := parsed{elements: map[string]int{}}
	var stack []string
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("page is not well-formed: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			stack = append(stack, tok.Name.Local)
			p.elements[tok.Name.Local]++
			p.attrs = append(p.attrs, tok.Attr...)
			p.open(tok)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			p.text(stack, string(tok))
		}
	}
	if len(stack) != 0 {
		t.Fatalf("unclosed elements %v", stack)
	}
	return p
}

func (p *parsed) open(el xml.StartElement) {
	switch el.Name.Local {
	case "figure":
		p.figures = append(p.figures, figure{})
	case "path":
		f := &p.figures[len(p.figures)-1]
		f.series = append(f.series, attr(el, "data-series"))
		f.paths = append(f.paths, attr(el, "d"))
	}
}

func (p *parsed) text(stack []string, s string) {
	if len(stack) > 0 && stack[len(stack)-1] == "figcaption" {
		p.figures[len(p.figures)-1].caption = s
	}
	if strings.TrimSpace(s) != "" {
		p.texts = append(p.texts, s)
	}
}

func attr(el xml.StartElement, name string) string {
	for _, a := range el.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func TestHTMLIsWellFormedAndScriptFree(t *testing.T) {
	p := parseXHTML(t, renderHTML(t, sampleReport()))
	if p.elements["script"] != 0 || p.elements["link"] != 0 || p.elements["img"] != 0 {
		t.Errorf("page has script, link or img elements: %v", p.elements)
	}
	for _, a := range p.attrs {
		if strings.HasPrefix(a.Name.Local, "on") || a.Name.Local == "src" || a.Name.Local == "href" {
			t.Errorf("attribute %s=%q: the page must not run code or load resources", a.Name.Local, a.Value)
		}
	}
	if p.elements["style"] != 1 || p.elements["svg"] != 10 {
		t.Errorf("want one inline stylesheet and 10 inline charts, got %v", p.elements)
	}
}

func TestHTMLChartsDrawEverySeries(t *testing.T) {
	p := parseXHTML(t, renderHTML(t, sampleReport()))
	systems := []string{"stowage", "cluster-autoscaler"}
	want := []figure{
		{caption: "Pending pods", series: systems},
		{caption: "Cost per hour", series: systems},
		{caption: "Pending pods by tier", series: []string{"inference", "web"}},
		{caption: "Nodes by instance type", series: []string{"c6i.xlarge", "g5.12xlarge"}},
		{caption: "Nodes by zone", series: []string{"us-east-1b"}},
		{caption: "Nodes by capacity type", series: []string{"on-demand"}},
		{caption: "Pending pods by tier", series: []string{"inference", "web"}},
		{caption: "Nodes by instance type", series: []string{"c6i.xlarge", "g5.12xlarge"}},
		{caption: "Nodes by zone", series: []string{"us-east-1a", "us-east-1b"}},
		{caption: "Nodes by capacity type", series: []string{"on-demand"}},
	}
	if len(p.figures) != len(want) {
		t.Fatalf("%d figures, want %d", len(p.figures), len(want))
	}
	for i, f := range p.figures {
		if f.caption != want[i].caption || !slices.Equal(f.series, want[i].series) {
			t.Errorf("figure %d: %q with series %v, want %q with %v", i, f.caption, f.series, want[i].caption, want[i].series)
		}
		for j, d := range f.paths {
			if !strings.HasPrefix(d, "M") || strings.Count(d, "L") < 59 {
				t.Errorf("figure %d series %s: path %.40q... has too few points for 60 samples", i, f.series[j], d)
			}
		}
	}
}

func TestHTMLEscapesEverything(t *testing.T) {
	r := hostile()
	page := renderHTML(t, r)
	for _, raw := range []string{"<script", "<svg onload", "<b>", "<i>", "</td><script>"} {
		if strings.Contains(page, raw) {
			t.Errorf("page contains raw %q", raw)
		}
	}
	p := parseXHTML(t, page)
	for _, want := range []string{r.Scenario, r.Systems[0].Name, r.Systems[0].Tiers[0].Name, r.Systems[0].Fallbacks[0].Reason} {
		if !slices.Contains(p.texts, want) && !slices.ContainsFunc(p.texts, func(s string) bool { return strings.Contains(s, want) }) {
			t.Errorf("text %q is not shown (escaped) on the page", want)
		}
	}
}

func TestHTMLWithoutSamples(t *testing.T) {
	r := sampleReport()
	for i := range r.Systems {
		r.Systems[i].Series = report.Series{}
	}
	p := parseXHTML(t, renderHTML(t, r))
	if p.elements["svg"] != 0 || !slices.Contains(p.texts, "No samples.") {
		t.Fatalf("empty series: %d charts drawn, want none and a note", p.elements["svg"])
	}
}

func TestHTMLIsDeterministic(t *testing.T) {
	if a, b := renderHTML(t, sampleReport()), renderHTML(t, sampleReport()); a != b {
		t.Fatal("two renders of the same report differ")
	}
}

func TestHTMLDownsamplesLongRuns(t *testing.T) {
	r := sampleReport()
	for i := range r.Systems {
		r.Systems[i].Series = report.Series{}
		fill(&r.Systems[i].Series, 24*60, map[string]string{"web": "c6i.xlarge"}, []string{"us-east-1a"}, 1)
	}
	p := parseXHTML(t, renderHTML(t, r))
	for _, f := range p.figures {
		for _, d := range f.paths {
			if n := strings.Count(d, "L"); n > 2*640 {
				t.Errorf("%s: %d points, want at most one per plot column", f.caption, n)
			}
		}
	}
}

func TestHTMLPathsStayInsideThePlot(t *testing.T) {
	p := parseXHTML(t, renderHTML(t, sampleReport()))
	for _, f := range p.figures {
		for j, d := range f.paths {
			fields := strings.FieldsFunc(d, func(r rune) bool { return r == 'M' || r == 'L' || r == 'Z' || r == ' ' })
			for k := 0; k+1 < len(fields); k += 2 {
				x, errX := strconv.ParseFloat(fields[k], 64)
				y, errY := strconv.ParseFloat(fields[k+1], 64)
				if errX != nil || errY != nil || x < 64 || x > 704 || y < 12 || y > 212 {
					t.Fatalf("%s, series %s: point (%s, %s) outside the plot [64,704]x[12,212]", f.caption, f.series[j], fields[k], fields[k+1])
				}
			}
		}
	}
}
