package report

import (
	"math"
	"slices"
	"testing"
	"time"
)

func yLabels(c svgChart) []string {
	var out []string
	for _, t := range c.YTicks {
		out = append(out, t.Label)
	}
	return out
}

func TestYAxisTicksAreRoundSteps(t *testing.T) {
	start := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		peak float64
		va   valueAxis
		want []string
	}{
		{"25 pods, once 0/6.2/12.5/18.8/25", 25, countAxis, []string{"0", "10", "20", "30"}},
		{"125 pods", 125, countAxis, []string{"0", "50", "100", "150"}},
		{"9 pods: no 2.5 between whole pods", 9, countAxis, []string{"0", "5", "10"}},
		{"3 pods", 3, countAxis, []string{"0", "1", "2", "3"}},
		{"no pods", 0, countAxis, []string{"0", "1"}},
		{"$63.31 an hour", 63.31, moneyAxis, []string{"$0.00", "$20.00", "$40.00", "$60.00", "$80.00"}},
		{"$9 an hour: 2.5 steps are round dollars and cents", 9, moneyAxis, []string{"$0.00", "$2.50", "$5.00", "$7.50", "$10.00"}},
		{"$0.30 an hour", 0.3, moneyAxis, []string{"$0.00", "$0.10", "$0.20", "$0.30"}},
		{"$0.02 an hour: no half cents", 0.02, moneyAxis, []string{"$0.00", "$0.01", "$0.02"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := lineChart("t", []series{{Name: "s", Values: []float64{0, tc.peak / 2, tc.peak}}}, start, time.Minute, tc.va)
			if got := yLabels(c); !slices.Equal(got, tc.want) {
				t.Errorf("y ticks %q, want %q", got, tc.want)
			}
		})
	}
}

// TestYAxisFitsEveryPeak checks, over many peaks, that the step is 1, 2, 2.5
// or 5 × 10^n and a whole number of the axis's smallest step, that the axis
// reaches the peak by less than one step, and that it has at most 5 ticks.
func TestYAxisFitsEveryPeak(t *testing.T) {
	for _, va := range []valueAxis{countAxis, moneyAxis} {
		for peak := 0.013; peak < 1e6; peak *= 1.37 {
			ax := newAxis(2, peak, va)
			mantissa := ax.yStep / math.Pow(10, math.Floor(math.Log10(ax.yStep)+1e-9))
			round := slices.ContainsFunc(roundSteps, func(m float64) bool { return math.Abs(m-mantissa) < 1e-6 })
			multiple := ax.yStep / va.minStep
			if !round || math.Abs(multiple-math.Round(multiple)) > 1e-6 {
				t.Errorf("peak %g (min step %g): step %g is not round", peak, va.minStep, ax.yStep)
			}
			if intervals := ax.yMax / ax.yStep; ax.yMax < peak || (ax.yMax-peak >= ax.yStep && intervals > 1+1e-9) || intervals > maxYIntervals+1e-9 {
				t.Errorf("peak %g: axis top %g with step %g", peak, ax.yMax, ax.yStep)
			}
		}
	}
}
