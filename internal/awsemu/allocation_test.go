package awsemu_test

import (
	"testing"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

// TestSpotAllocationStrategiesWeighCapacity: a one-instance spot fleet over
// three pools (a cheap shallow one, a mid-priced deep one, a dear deeper
// one) launches where each strategy's documentation says: lowest-price the
// cheapest, capacity-optimized the deepest, price-capacity-optimized the
// cheapest of the deep ones, capacity-optimized-prioritized the first
// priority among the deep ones.
func TestSpotAllocationStrategiesWeighCapacity(t *testing.T) {
	pools := []struct {
		instanceType string
		price        float64
		depth        int
		priority     float64
	}{
		{"c6i.large", 0.02, 3, 0},    // cheapest, nearly empty
		{"m6i.large", 0.03, 800, 2},  // deep enough, cheaper than the deepest
		{"r6i.large", 0.05, 1000, 1}, // deepest, dearest
	}
	for strategy, want := range map[string]string{
		awsemu.StrategyLowestPrice:                  "c6i.large",
		awsemu.StrategyCapacityOptimized:            "r6i.large",
		awsemu.StrategyPriceCapacityOptimized:       "m6i.large",
		awsemu.StrategyCapacityOptimizedPrioritized: "r6i.large",
	} {
		e := awsemu.New(awsemu.DefaultConfig())
		w := newWorld(t, e)
		req := awsemu.FleetRequest{CapacityType: awsemu.CapacitySpot, TotalTargetCapacity: 1, SpotStrategy: strategy}
		for _, p := range pools {
			e.SetPool(awsemu.PoolKey{InstanceType: p.instanceType, Zone: w.zone, CapacityType: awsemu.CapacitySpot},
				awsemu.Pool{Capacity: p.depth, Price: p.price})
			req.Overrides = append(req.Overrides, awsemu.FleetOverride{LaunchTemplateID: w.template, InstanceType: p.instanceType,
				SubnetID: w.subnet, Priority: p.priority, HasPriority: true})
		}
		res, err := e.CreateFleet(req)
		if err != nil || len(res.Instances) != 1 {
			t.Fatalf("%s: %+v, %v", strategy, res, err)
		}
		if got := res.Instances[0].Override.InstanceType; got != want {
			t.Errorf("%s launched %s, want %s", strategy, got, want)
		}
	}
}

// TestPriceCapacityOptimizedTakesAShortPoolAsEmpty: a pool marked short has
// no depth, however much capacity it had: the fleet launches from the
// deepest pool with room instead of the cheaper shallow one, and never
// tries the short one.
func TestPriceCapacityOptimizedTakesAShortPoolAsEmpty(t *testing.T) {
	e := awsemu.New(awsemu.DefaultConfig())
	w := newWorld(t, e)
	req := awsemu.FleetRequest{CapacityType: awsemu.CapacitySpot, TotalTargetCapacity: 1, SpotStrategy: awsemu.StrategyPriceCapacityOptimized}
	for _, p := range []struct {
		instanceType string
		price        float64
		depth        int
		short        bool
	}{{"c6i.large", 0.02, 40, false}, {"t3.medium", 0.01, 10, false}, {"m6i.large", 0.03, 1000, true}} {
		e.SetPool(awsemu.PoolKey{InstanceType: p.instanceType, Zone: w.zone, CapacityType: awsemu.CapacitySpot},
			awsemu.Pool{Capacity: p.depth, Price: p.price, Short: p.short})
		req.Overrides = append(req.Overrides, awsemu.FleetOverride{LaunchTemplateID: w.template, InstanceType: p.instanceType, SubnetID: w.subnet})
	}
	res, err := e.CreateFleet(req)
	if err != nil || len(res.Instances) != 1 {
		t.Fatalf("%+v, %v", res, err)
	}
	if got := res.Instances[0].Override.InstanceType; got != "c6i.large" {
		t.Errorf("launched %s, want c6i.large, the deepest pool with room", got)
	}
	if len(res.Errors) != 0 {
		t.Errorf("errors %+v: the short pool comes last and is never tried", res.Errors)
	}
}
