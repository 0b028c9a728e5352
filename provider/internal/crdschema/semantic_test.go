package crdschema_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/stowage-dev/stowage/provider/internal/crdschema"
)

func TestEquivalentSpellings(t *testing.T) {
	for _, tc := range []struct {
		semantic crdschema.Semantic
		a, b     string
		want     bool
	}{
		{crdschema.Duration, "720h", "720h0m0s", true},
		{crdschema.Duration, "1h", "60m", true},
		{crdschema.Duration, "Never", "Never", true},
		{crdschema.Duration, "Never", "720h", false},
		{crdschema.Duration, "5m", "5m1s", false},
		{crdschema.Duration, "forever", "forever1", false},
		{crdschema.Quantity, "1k", "1000", true},
		{crdschema.Quantity, "1Gi", "1024Mi", true},
		{crdschema.Quantity, "1G", "1Gi", false},
		{crdschema.Quantity, "0.5", "500m", true},
		{crdschema.Exact, "1k", "1000", false},
	} {
		if got := tc.semantic.Equivalent(tc.a, tc.b); got != tc.want {
			t.Errorf("%q %s %q: equivalent %v, want %v", tc.semantic, tc.a, tc.b, got, tc.want)
		}
	}
}

// TestTheCRDsDurationsAndQuantitiesAreFound reads the semantics off the
// NodePool CRD: its durations by their CEL rule, its quantities by their
// int-or-string pattern.
func TestTheCRDsDurationsAndQuantitiesAreFound(t *testing.T) {
	root, err := crdschema.Build(crd(t, "NodePool"), crdschema.NodePoolSpec)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]crdschema.Semantic{"expire_after": crdschema.Duration, "termination_grace_period": crdschema.Duration,
		"limits": crdschema.Quantity, "weight": crdschema.Exact} {
		if got := root.Child(name).Semantic; got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	if got := root.Child("disruption").Child("consolidate_after").Semantic; got != crdschema.Duration {
		t.Errorf("disruption.consolidate_after: %q, want duration", got)
	}
}

// TestKeepEquivalentPlansThePriorSpelling: a planned duration and map of
// quantities equivalent to the prior ones take the prior's spelling; a
// changed value keeps the plan's.
func TestKeepEquivalentPlansThePriorSpelling(t *testing.T) {
	root, err := crdschema.Build(crd(t, "NodePool"), crdschema.NodePoolSpec)
	if err != nil {
		t.Fatal(err)
	}
	value := func(expire, grace, cpu string) tftypes.Value {
		v, err := root.FromJSON(map[string]any{"spec": map[string]any{
			"limits":   map[string]any{"cpu": cpu, "memory": "4000Gi"},
			"template": map[string]any{"spec": map[string]any{"expireAfter": expire, "terminationGracePeriod": grace}}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	got, err := root.KeepEquivalent(value("720h", "1h", "1000"), value("720h0m0s", "48h0m0s", "1k"))
	if err != nil {
		t.Fatal(err)
	}
	if want := value("720h0m0s", "1h", "1k"); !got.Equal(want) {
		t.Errorf("planned %v, want %v", got, want)
	}
}
