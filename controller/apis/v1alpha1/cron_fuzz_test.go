package v1alpha1_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/stowage-dev/stowage/controller/apis/crds"
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// scheduleRule reads the CRD's rule on a budget's schedule, the macros it
// lists and the pattern it matches, which Go's regexp (RE2, as CEL's matches
// is) evaluates: what Validate accepts, admission must accept too, or the API
// server would refuse a budget the Go side calls valid.
func scheduleRule(t testing.TB) (macros []string, pattern *regexp.Regexp) {
	t.Helper()
	for _, crd := range crds.MustCRDs() {
		if crd.Spec.Names.Kind != "NodePool" {
			continue
		}
		budgets := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["disruption"].Properties["budgets"]
		for _, r := range budgets.Items.Schema.Properties["schedule"].XValidations {
			in := regexp.MustCompile(`^self in \[(.*)\] \|\| self\.matches\(r'(.*)'\)$`).FindStringSubmatch(r.Rule)
			if in == nil {
				t.Fatalf("the schedule rule %q is not 'self in [...] || self.matches(...)': update this test", r.Rule)
			}
			for _, m := range strings.Split(in[1], ", ") {
				macros = append(macros, strings.Trim(m, "'"))
			}
			return macros, regexp.MustCompile(in[2])
		}
	}
	t.Fatal("no rule on spec.disruption.budgets.schedule in the NodePool CRD")
	return nil, nil
}

// FuzzValidateCron checks a budget's schedule: a refused one is refused on
// spec.disruption.budgets[0].schedule with a message; an accepted one parses
// with the disruption controller's parser, fires within five years of any
// day, and passes the CRD's rule.
func FuzzValidateCron(f *testing.F) {
	celMacros, celSchedule := scheduleRule(f)
	for _, s := range []string{"0 9 * * 1-5", "@daily", "*/15 * * * *", "0 0 30 2 *", "@every 5m", "0 0 * * * *", "TZ=Asia/Tokyo 0 9 * * *", "0 9 * JAN MON"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if err := v1alpha1.ValidateCron(s); err != nil {
			budget := v1alpha1.Budget{Nodes: "1", Schedule: &s, Duration: &metav1.Duration{Duration: time.Hour}}
			pool := v1alpha1.NodePool{Spec: v1alpha1.NodePoolSpec{Disruption: v1alpha1.Disruption{Budgets: []v1alpha1.Budget{budget}}}}
			errs := pool.Validate()
			want := field.NewPath("spec", "disruption", "budgets").Index(0).Child("schedule").String()
			if !slices.ContainsFunc(errs, func(e *field.Error) bool { return e.Field == want && e.Detail != "" }) {
				t.Fatalf("ValidateCron refuses %q (%v) but the pool's errors %v do not name %s", s, err, errs.ToAggregate(), want)
			}
			return
		}
		schedule, err := v1alpha1.ParseCron(s)
		if err != nil {
			t.Fatalf("ValidateCron accepts %q, the parser does not: %v", s, err)
		}
		for _, from := range []time.Time{time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2031, 12, 31, 23, 59, 0, 0, time.UTC)} {
			if next := schedule.Next(from); next.IsZero() || next.Sub(from) > 5*366*24*time.Hour {
				t.Fatalf("%q is accepted but does not fire within five years of %s (next %s)", s, from, next)
			}
		}
		if !slices.Contains(celMacros, s) && !celSchedule.MatchString(s) {
			t.Fatalf("%q is accepted by ValidateCron but the CRD's rule refuses it", s)
		}
	})
}
