package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"
)

// formatDuration renders d as "4.2s" under a minute, "6m05s" under an hour,
// and "1h02m03s" beyond, rounded to the shown precision.
func formatDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + formatDuration(-d)
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	s := int64(d.Round(time.Second) / time.Second)
	if s < 3600 {
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm%02ds", s/3600, s/60%60, s%60)
}

// formatOffset renders t relative to start as "+HH:MM:SS" (hours may pass 24).
func formatOffset(t, start time.Time) string {
	s := int64(t.Sub(start).Round(time.Second) / time.Second)
	sign := "+"
	if s < 0 {
		sign, s = "-", -s
	}
	return fmt.Sprintf("%s%02d:%02d:%02d", sign, s/3600, s/60%60, s%60)
}

// formatMoney renders dollars with cents.
func formatMoney(x float64) string {
	if x < 0 {
		return fmt.Sprintf("-$%.2f", -x)
	}
	return fmt.Sprintf("$%.2f", x)
}

// formatTime renders t in UTC, to the second.
func formatTime(t time.Time) string {
	return t.UTC().Format(time.RFC3339)
}

// round rounds x to places decimals, for stable JSON.
func round(x float64, places int) float64 {
	p := math.Pow10(places)
	return math.Round(x*p) / p
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

func maxInt(xs []int) int {
	var m int
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

func maxFloat(xs []float64) float64 {
	var m float64
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
