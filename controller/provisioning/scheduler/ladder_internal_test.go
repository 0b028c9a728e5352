package scheduler

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Karpenter removes the first ScheduleAnyway constraint left by moving the
// list's last entry into its slot, so the order it sheds them in is not the
// order they are written in.
func TestScheduleAnywayOrderFollowsKarpentersRemoval(t *testing.T) {
	tsc := func(when corev1.UnsatisfiableConstraintAction) corev1.TopologySpreadConstraint {
		return corev1.TopologySpreadConstraint{WhenUnsatisfiable: when}
	}
	any, dns := corev1.ScheduleAnyway, corev1.DoNotSchedule
	for _, tc := range []struct {
		name string
		in   []corev1.TopologySpreadConstraint
		want []int
	}{
		{"none", []corev1.TopologySpreadConstraint{tsc(dns)}, nil},
		{"one", []corev1.TopologySpreadConstraint{tsc(dns), tsc(any)}, []int{1}},
		// [D A1 A2 A3]: A1 goes, A3 takes its slot: [D A3 A2]; then A3, then A2.
		{"three after a required one", []corev1.TopologySpreadConstraint{tsc(dns), tsc(any), tsc(any), tsc(any)}, []int{1, 3, 2}},
		// [A0 D A2]: A0 goes, A2 takes its slot: [A2 D]; then A2.
		{"a required one between", []corev1.TopologySpreadConstraint{tsc(any), tsc(dns), tsc(any)}, []int{0, 2}},
	} {
		if got := scheduleAnywayOrder(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("%s: order %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestParsePreferencePolicy(t *testing.T) {
	for in, want := range map[string]PreferencePolicy{"respect": PreferencesRespect, "Respect": PreferencesRespect, "IGNORE": PreferencesIgnore, " cost-aware ": PreferencesCostAware} {
		if got, err := ParsePreferencePolicy(in); err != nil || got != want {
			t.Errorf("ParsePreferencePolicy(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	_, err := ParsePreferencePolicy("costaware")
	if err == nil || err.Error() != `"costaware" is not a preference policy: use respect, ignore or cost-aware` {
		t.Errorf("error = %v, want one that lists the valid values", err)
	}
}
