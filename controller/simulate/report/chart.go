package report

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Chart geometry, in SVG user units.
const (
	chartWidth   = 720
	chartHeight  = 240
	marginLeft   = 64
	marginRight  = 16
	marginTop    = 12
	marginBottom = 28
	plotWidth    = chartWidth - marginLeft - marginRight
	plotHeight   = chartHeight - marginTop - marginBottom
	// maxPoints caps the points per series; longer series keep each bucket's maximum.
	maxPoints = plotWidth
	// paletteSize is the number of series colours the stylesheet defines.
	paletteSize = 10
)

// series is one named line or band.
type series struct {
	Name   string
	Values []float64
}

// svgChart is a chart laid out for the template: every number preformatted.
type svgChart struct {
	Title string
	// Kind is "line" or "area", the CSS class of every path.
	Kind           string
	Width, Height  int
	PlotX, PlotY   string
	PlotW, PlotH   string
	PlotRight      string
	XTicks, YTicks []svgTick
	Paths          []svgPath
	// Empty is true when there is nothing to plot.
	Empty bool
}

type svgTick struct {
	X, Y  string
	Label string
}

// svgPath is one series: its name, its palette class and its path data.
type svgPath struct {
	Name  string
	Class string
	D     string
}

// axis is the mapping from samples and values to plot coordinates.
type axis struct {
	n int
	// yStep is the round step between y ticks; yMax, the top of the axis, a whole number of them.
	yStep, yMax float64
}

// newAxis fits n samples whose largest value is peak onto an axis of up to
// maxYIntervals round steps.
func newAxis(n int, peak float64, va valueAxis) axis {
	step := roundStep(peak/maxYIntervals, va.minStep)
	intervals := max(1, math.Ceil(peak/step-1e-9))
	return axis{n: n, yStep: step, yMax: intervals * step}
}

func (a axis) x(i int) float64 {
	return marginLeft + float64(i)*plotWidth/float64(max(a.n-1, 1))
}

func (a axis) y(v float64) float64 {
	return marginTop + plotHeight - v*plotHeight/a.yMax
}

// lineChart draws each series as a line.
func lineChart(title string, ss []series, start time.Time, step time.Duration, va valueAxis) svgChart {
	ss, step = downsample(ss, step)
	ax := newAxis(seriesLen(ss), peak(ss, false), va)
	c := newChart(title, "line", ax, start, step, va.label)
	for i, s := range ss {
		var d strings.Builder
		for j, v := range s.Values {
			d.WriteString(moveOrLine(j) + coord(ax.x(j)) + " " + coord(ax.y(v)))
		}
		c.Paths = append(c.Paths, svgPath{Name: s.Name, Class: paletteClass(i), D: d.String()})
	}
	return c
}

// stackedChart draws the series as bands stacked in order, each from the
// sum of the ones before it to that sum plus its own values.
func stackedChart(title string, ss []series, start time.Time, step time.Duration, va valueAxis) svgChart {
	ss, step = downsample(ss, step)
	ax := newAxis(seriesLen(ss), peak(ss, true), va)
	c := newChart(title, "area", ax, start, step, va.label)
	base := make([]float64, ax.n)
	for i, s := range ss {
		top := make([]float64, ax.n)
		var d strings.Builder
		for j := range ax.n {
			top[j] = base[j] + valueAt(s.Values, j)
			d.WriteString(moveOrLine(j) + coord(ax.x(j)) + " " + coord(ax.y(top[j])))
		}
		for j := ax.n - 1; j >= 0; j-- {
			d.WriteString("L" + coord(ax.x(j)) + " " + coord(ax.y(base[j])))
		}
		d.WriteString("Z")
		c.Paths = append(c.Paths, svgPath{Name: s.Name, Class: paletteClass(i), D: d.String()})
		base = top
	}
	return c
}

func newChart(title, kind string, ax axis, start time.Time, step time.Duration, yLabel func(float64) string) svgChart {
	c := svgChart{Title: title, Kind: kind, Width: chartWidth, Height: chartHeight, Empty: ax.n == 0,
		PlotX: coord(marginLeft), PlotY: coord(marginTop), PlotW: coord(plotWidth), PlotH: coord(plotHeight),
		PlotRight: coord(marginLeft + plotWidth)}
	for k := 0.0; k*ax.yStep <= ax.yMax+ax.yStep/2; k++ {
		v := k * ax.yStep
		c.YTicks = append(c.YTicks, svgTick{X: coord(marginLeft - 6), Y: coord(ax.y(v)), Label: yLabel(v)})
	}
	c.XTicks = timeTicks(ax, start, step)
	return c
}

// tickIntervals are the x-axis spacings tried, smallest first.
var tickIntervals = []time.Duration{time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour}

// timeTicks labels the x axis with UTC clock times, at most 8 ticks.
func timeTicks(ax axis, start time.Time, step time.Duration) []svgTick {
	if ax.n < 2 || step <= 0 {
		return nil
	}
	span := time.Duration(ax.n-1) * step
	interval := tickIntervals[len(tickIntervals)-1]
	for _, iv := range tickIntervals {
		if span/iv <= 8 {
			interval = iv
			break
		}
	}
	layout := "15:04"
	if span > 24*time.Hour {
		layout = "Jan 2 15:04"
	}
	var ticks []svgTick
	for off := time.Duration(0); off <= span; off += interval {
		x := marginLeft + float64(off)/float64(span)*plotWidth
		ticks = append(ticks, svgTick{X: coord(x), Y: coord(marginTop + plotHeight + 16), Label: start.Add(off).UTC().Format(layout)})
	}
	return ticks
}

// downsample keeps at most maxPoints values per series, each the maximum of
// its bucket, and returns the step between the kept values.
func downsample(ss []series, step time.Duration) ([]series, time.Duration) {
	n := seriesLen(ss)
	if n <= maxPoints {
		return ss, step
	}
	bucket := (n + maxPoints - 1) / maxPoints
	out := make([]series, len(ss))
	for i, s := range ss {
		out[i].Name = s.Name
		for j := 0; j < n; j += bucket {
			var m float64
			for k := j; k < min(j+bucket, n); k++ {
				m = max(m, valueAt(s.Values, k))
			}
			out[i].Values = append(out[i].Values, m)
		}
	}
	return out, step * time.Duration(bucket)
}

func seriesLen(ss []series) int {
	var n int
	for _, s := range ss {
		n = max(n, len(s.Values))
	}
	return n
}

// peak is the largest value of any series, or of their sum when stacked.
func peak(ss []series, stacked bool) float64 {
	var m float64
	for j := range seriesLen(ss) {
		var sum float64
		for _, s := range ss {
			v := valueAt(s.Values, j)
			sum += v
			m = max(m, v)
		}
		if stacked {
			m = max(m, sum)
		}
	}
	return m
}

func valueAt(vs []float64, i int) float64 {
	if i < len(vs) {
		return vs[i]
	}
	return 0
}

// maxYIntervals is how many steps a y axis has at most.
const maxYIntervals = 4

// roundSteps are the mantissas of round tick steps: each times a power of ten.
var roundSteps = []float64{1, 2, 2.5, 5}

// roundStep rounds v up to a round step (1, 2, 2.5 or 5 × 10^n) that is a
// whole multiple of minStep: no 2.5 between whole counts, no half cents.
func roundStep(v, minStep float64) float64 {
	if v <= minStep || math.IsNaN(v) || math.IsInf(v, 0) {
		return minStep
	}
	for exp := math.Pow(10, math.Floor(math.Log10(v))); ; exp *= 10 {
		for _, m := range roundSteps {
			step := m * exp
			if whole := step / minStep; step >= v*(1-1e-9) && math.Abs(whole-math.Round(whole)) < 1e-9 {
				return step
			}
		}
	}
}

func moveOrLine(i int) string {
	if i == 0 {
		return "M"
	}
	return "L"
}

func coord(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func paletteClass(i int) string { return "c" + strconv.Itoa(i%paletteSize) }

func intsToFloats(xs []int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

// countLabel labels a count axis: whole numbers, or one decimal between them.
func countLabel(v float64) string {
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// moneyLabel labels a dollars-an-hour axis.
func moneyLabel(v float64) string { return formatMoney(v) }

// valueAxis is what a chart's y axis shows: how its values are labelled, and
// the smallest step its labels tell apart, of which every step is a multiple.
type valueAxis struct {
	label   func(float64) string
	minStep float64
}

var (
	// countAxis counts pods or nodes.
	countAxis = valueAxis{label: countLabel, minStep: 1}
	// moneyAxis is dollars an hour, to the cent.
	moneyAxis = valueAxis{label: moneyLabel, minStep: 0.01}
)
