package scheduling_test

import (
	"testing"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

func TestRequirementHas(t *testing.T) {
	cases := []struct {
		op     string
		values []string
		in     []string
		out    []string
		absent bool
	}{
		{v1alpha1.OperatorIn, []string{"a", "b"}, []string{"a", "b"}, []string{"c"}, false},
		{v1alpha1.OperatorNotIn, []string{"a"}, []string{"b", "c"}, []string{"a"}, true},
		{v1alpha1.OperatorExists, nil, []string{"a", "zz"}, nil, false},
		{v1alpha1.OperatorDoesNotExist, nil, nil, []string{"a"}, true},
		{v1alpha1.OperatorGt, []string{"4"}, []string{"5", "100"}, []string{"4", "3", "x"}, false},
		{v1alpha1.OperatorGte, []string{"4"}, []string{"4", "5"}, []string{"3"}, false},
		{v1alpha1.OperatorLt, []string{"4"}, []string{"3", "0"}, []string{"4", "5"}, false},
		{v1alpha1.OperatorLte, []string{"4"}, []string{"4", "3"}, []string{"5"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.op, func(t *testing.T) {
			r := scheduling.NewRequirement("k", tc.op, tc.values...)
			for _, v := range tc.in {
				if !r.Has(v) {
					t.Errorf("%s %v should allow %q", tc.op, tc.values, v)
				}
			}
			for _, v := range tc.out {
				if r.Has(v) {
					t.Errorf("%s %v should not allow %q", tc.op, tc.values, v)
				}
			}
			if r.AllowsAbsent() != tc.absent {
				t.Errorf("%s AllowsAbsent = %v, want %v", tc.op, r.AllowsAbsent(), tc.absent)
			}
		})
	}
}

func TestRequirementIntersection(t *testing.T) {
	req := scheduling.NewRequirement
	cases := []struct {
		name    string
		a, b    *scheduling.Requirement
		allowed []string
		denied  []string
		empty   bool
	}{
		{"in and in", req("k", "In", "a", "b"), req("k", "In", "b", "c"), []string{"b"}, []string{"a", "c"}, false},
		{"in and notin", req("k", "In", "a", "b"), req("k", "NotIn", "a"), []string{"b"}, []string{"a"}, false},
		{"notin and notin", req("k", "NotIn", "a"), req("k", "NotIn", "b"), []string{"c"}, []string{"a", "b"}, false},
		{"in and gt", req("k", "In", "2", "8"), req("k", "Gt", "4"), []string{"8"}, []string{"2"}, false},
		{"gt and lt", req("k", "Gt", "2"), req("k", "Lt", "5"), []string{"3", "4"}, []string{"2", "5"}, false},
		{"gt and lt disjoint", req("k", "Gt", "4"), req("k", "Lt", "5"), nil, []string{"4", "5"}, true},
		{"disjoint in", req("k", "In", "a"), req("k", "In", "b"), nil, []string{"a", "b"}, true},
		{"exists and doesnotexist", req("k", "Exists"), req("k", "DoesNotExist"), nil, []string{"a"}, true},
		{"in and lte outside", req("k", "In", "5", "6"), req("k", "Lte", "4"), nil, []string{"5", "6"}, true},
		{"notin and in covered", req("k", "NotIn", "a", "b"), req("k", "In", "a", "b"), nil, []string{"a", "b"}, true},
		{"gte and lte touching", req("k", "Gte", "4"), req("k", "Lte", "4"), []string{"4"}, []string{"3", "5"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range []*scheduling.Requirement{tc.a.Intersection(tc.b), tc.b.Intersection(tc.a)} {
				for _, v := range tc.allowed {
					if !r.Has(v) {
						t.Errorf("%s should allow %q", r, v)
					}
				}
				for _, v := range tc.denied {
					if r.Has(v) {
						t.Errorf("%s should not allow %q", r, v)
					}
				}
				if r.IsEmpty() != tc.empty {
					t.Errorf("%s IsEmpty = %v, want %v", r, r.IsEmpty(), tc.empty)
				}
			}
			if got := tc.a.Intersects(tc.b); got == tc.empty {
				t.Errorf("%s Intersects %s = %v, want %v", tc.a, tc.b, got, !tc.empty)
			}
			if got := tc.b.Intersects(tc.a); got == tc.empty {
				t.Errorf("%s Intersects %s = %v, want %v", tc.b, tc.a, got, !tc.empty)
			}
		})
	}
}

func TestRequirementsCompatible(t *testing.T) {
	node := scheduling.FromLabels(map[string]string{"zone": "a", "arch": "amd64"})
	cases := []struct {
		name string
		want *scheduling.Requirement
		ok   bool
	}{
		{"matching value", scheduling.NewRequirement("zone", "In", "a", "b"), true},
		{"other value", scheduling.NewRequirement("zone", "In", "b"), false},
		{"notin other", scheduling.NewRequirement("arch", "NotIn", "arm64"), true},
		{"undefined label with In", scheduling.NewRequirement("team", "In", "x"), false},
		{"undefined label with NotIn", scheduling.NewRequirement("team", "NotIn", "x"), true},
		{"undefined label with DoesNotExist", scheduling.NewRequirement("team", "DoesNotExist"), true},
		{"defined label with DoesNotExist", scheduling.NewRequirement("zone", "DoesNotExist"), false},
		{"undefined label with Exists", scheduling.NewRequirement("team", "Exists"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := node.Compatible(scheduling.NewRequirements(tc.want))
			if (err == nil) != tc.ok {
				t.Errorf("Compatible(%s) = %v, want ok=%v", tc.want, err, tc.ok)
			}
			if node.Intersects(scheduling.NewRequirements(tc.want)) != tc.ok {
				t.Errorf("Intersects(%s) disagrees with Compatible", tc.want)
			}
		})
	}
}

func TestRequirementSubsetOf(t *testing.T) {
	req := scheduling.NewRequirement
	cases := []struct {
		a, b *scheduling.Requirement
		want bool
	}{
		{req("k", "In", "a"), req("k", "In", "a", "b"), true},
		{req("k", "In", "a", "c"), req("k", "In", "a", "b"), false},
		{req("k", "Exists"), req("k", "In", "a"), false},
		{req("k", "NotIn", "a", "b"), req("k", "NotIn", "a"), true},
		{req("k", "NotIn", "a"), req("k", "NotIn", "a", "b"), false},
		{req("k", "Gt", "5"), req("k", "Gt", "3"), true},
		{req("k", "Gt", "3"), req("k", "Gt", "5"), false},
	}
	for _, tc := range cases {
		if got := tc.a.SubsetOf(tc.b); got != tc.want {
			t.Errorf("%s SubsetOf %s = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestRequirementAPIRoundTrip(t *testing.T) {
	api := []v1alpha1.NodeSelectorRequirementWithMinValues{
		{Key: "a", Operator: "In", Values: []string{"x", "y"}},
		{Key: "b", Operator: "NotIn", Values: []string{"z"}},
		{Key: "c", Operator: "Exists"},
		{Key: "d", Operator: "DoesNotExist"},
	}
	got := scheduling.FromAPI(api).API()
	if len(got) != len(api) {
		t.Fatalf("round trip gave %d requirements, want %d: %v", len(got), len(api), got)
	}
	for i := range api {
		if got[i].Key != api[i].Key || got[i].Operator != api[i].Operator || len(got[i].Values) != len(api[i].Values) {
			t.Errorf("requirement %d: got %+v, want %+v", i, got[i], api[i])
		}
	}
}
