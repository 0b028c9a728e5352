package scheduling_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// FuzzRequirement checks a NodePool requirement (key, operator, values
// separated by commas, minValues, 0 for none) from validation to the
// vocabulary: a refused one names the requirement's field; an accepted one,
// turned into the vocabulary's form and back to the API form, validates
// again and allows exactly the same label values, and keeps its minValues.
func FuzzRequirement(f *testing.F) {
	f.Add("stowage.dev/instance-family", "In", "c6i,m6i", 2)
	f.Add("stowage.dev/instance-cpu", "Gt", "3", 0)
	f.Add("karpenter.k8s.aws/instance-category", "NotIn", "t", 0)
	f.Add("example.com/team", "Exists", "", 0)
	f.Add("topology.kubernetes.io/zone", "DoesNotExist", "", 0)
	f.Add("stowage.dev/instance-memory", "Lte", "8192", 0)
	f.Fuzz(func(t *testing.T, key, op, values string, minValues int) {
		in := v1alpha1.NodeSelectorRequirementWithMinValues{Key: key, Operator: op}
		if values != "" {
			in.Values = strings.Split(values, ",")
		}
		if minValues != 0 {
			in.MinValues = &minValues
		}
		path := field.NewPath("spec", "requirements").Index(0)
		if errs := v1alpha1.ValidateRequirement(path, in); len(errs) > 0 {
			for _, e := range errs {
				if !strings.HasPrefix(e.Field, path.String()+".") {
					t.Fatalf("error %q does not name a field of %s", e, path)
				}
			}
			return
		}
		req := scheduling.FromAPI([]v1alpha1.NodeSelectorRequirementWithMinValues{in})
		api := req.API()
		if errs := v1alpha1.ValidateRequirements(field.NewPath("spec", "requirements"), api); len(errs) > 0 {
			t.Fatalf("%+v became %+v, which does not validate: %v", in, api, errs.ToAggregate())
		}
		back := scheduling.FromAPI(api)
		for _, k := range req.Keys() {
			a, b := req.Get(k), back.Get(k)
			for _, v := range probes(in.Values) {
				if a.Has(v) != b.Has(v) {
					t.Fatalf("%s: %q allowed %t before the round trip (%s), %t after (%s)", k, v, a.Has(v), a, b.Has(v), b)
				}
			}
			if a.AllowsAbsent() != b.AllowsAbsent() || !equalPtr(a.MinValues, b.MinValues) {
				t.Fatalf("%s: %s became %s", k, a, b)
			}
		}
		if !slices.Equal(req.Keys(), back.Keys()) {
			t.Fatalf("keys %v became %v", req.Keys(), back.Keys())
		}
	})
}

// probes are values to compare two requirements on: the ones written, and
// integers around them.
func probes(values []string) []string {
	out := slices.Clone(values)
	for _, v := range values {
		if n, err := strconv.Atoi(v); err == nil {
			out = append(out, strconv.Itoa(n-1), strconv.Itoa(n+1))
		}
	}
	return append(out, "0", "1", "7", "100", "a", "")
}

func equalPtr(a, b *int) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}
