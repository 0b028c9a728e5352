package aws_test

import (
	"testing"

	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

// TestDiscoveryAndPricing discovers the built-in catalogue from the emulator and
// checks each type has the shape, capacity, overhead and prices the built-in
// catalogue gives it.
func TestDiscoveryAndPricing(t *testing.T) {
	e := newEnv(t, awsemu.BuiltinCatalogue(), 3)
	if err := e.cp.Refresh(ctx(t)); err != nil {
		t.Fatalf("refreshing: %v", err)
	}
	got, err := e.cp.InstanceTypes(ctx(t), nodePool("default"))
	if err != nil {
		t.Fatalf("listing instance types: %v", err)
	}
	zones := []string{"us-east-1a", "us-east-1b", "us-east-1c"}
	want := map[string]*cloudprovider.InstanceType{}
	for _, it := range catalogue.InstanceTypes(catalogue.Builtin(), catalogue.Options{Region: "us-east-1", Zones: zones}) {
		want[it.Name] = it
	}
	if len(got) != len(want) {
		t.Fatalf("discovered %d types, want %d", len(got), len(want))
	}
	for _, it := range got {
		w := want[it.Name]
		if w == nil {
			t.Fatalf("discovered unknown type %s", it.Name)
		}
		if it.Requirements.String() != w.Requirements.String() {
			t.Errorf("%s requirements:\n got %s\nwant %s", it.Name, it.Requirements, w.Requirements)
		}
		if it.Capacity.CPU != w.Capacity.CPU || it.Allocatable().Memory != w.Allocatable().Memory ||
			it.Allocatable().Pods != w.Allocatable().Pods || it.Capacity.Get("nvidia.com/gpu") != w.Capacity.Get("nvidia.com/gpu") {
			t.Errorf("%s capacity %+v allocatable %+v, want %+v / %+v", it.Name, it.Capacity, it.Allocatable(), w.Capacity, w.Allocatable())
		}
		checkPrices(t, e, it, w)
	}
}

func checkPrices(t *testing.T, e *env, it, w *cloudprovider.InstanceType) {
	t.Helper()
	if len(it.Offerings) != len(w.Offerings) {
		t.Errorf("%s has %d offerings, want %d", it.Name, len(it.Offerings), len(w.Offerings))
	}
	for _, o := range it.Offerings {
		key := awsemu.PoolKey{InstanceType: it.Name, Zone: o.Zone, CapacityType: o.CapacityType}
		pool, ok := e.emu.Pool(key)
		if !ok || pool.Price != o.Price || !o.Available {
			t.Errorf("%s offering %+v, emulator pool %+v", it.Name, o, pool)
		}
	}
}

// TestPricingFallsBackToCatalogue keeps the built-in on-demand prices when the
// Pricing API refuses to answer.
func TestPricingFallsBackToCatalogue(t *testing.T) {
	e := newEnv(t, awsemu.BuiltinCatalogue()[:10], 2)
	e.emu.Inject(awsemu.Fault{Action: "GetProducts", Kind: awsemu.FaultAccessDenied})
	if err := e.cp.Refresh(ctx(t)); err == nil {
		t.Fatalf("refresh succeeded, want the pricing error reported")
	}
	got, err := e.cp.InstanceTypes(ctx(t), nodePool("default"))
	if err != nil {
		t.Fatalf("listing instance types: %v", err)
	}
	builtin := map[string]float64{}
	for _, info := range catalogue.Builtin() {
		builtin[info.Name] = info.OnDemandPrice
	}
	if len(got) != 10 {
		t.Fatalf("got %d types, want 10", len(got))
	}
	for _, it := range got {
		for _, o := range it.Offerings {
			if o.CapacityType == "on-demand" && o.Price != builtin[it.Name] {
				t.Errorf("%s on-demand price %v, want the built-in %v", it.Name, o.Price, builtin[it.Name])
			}
		}
	}
}
