package catalogue_test

import (
	"testing"

	"github.com/stowage-dev/stowage/controller/catalogue"
)

// documentedSpotFraction is the table of docs/guides/capacity.md ("Spot prices").
var documentedSpotFraction = map[string]float64{
	"t": 0.32, "c": 0.36, "m": 0.38, "r": 0.35, "g": 0.42, "p": 0.55, "inf": 0.40, "trn": 0.45,
}

var zones = []string{"us-east-1a", "us-east-1b", "us-east-1c", "eu-west-1a"}

// TestSpotPriceFollowsTheDocumentedModel checks every type in every zone: below
// on-demand, and on-demand x the category's fraction x a factor in [0.92, 1.08].
func TestSpotPriceFollowsTheDocumentedModel(t *testing.T) {
	const rounding = 5e-7 // prices are rounded to 6 decimals
	for _, info := range catalogue.Builtin() {
		f, ok := documentedSpotFraction[info.Category]
		if !ok {
			t.Errorf("%s: category %q has no documented spot fraction", info.Name, info.Category)
			continue
		}
		for _, z := range zones {
			p := catalogue.SpotPrice(info, z)
			lo, hi := info.OnDemandPrice*f*0.92-rounding, info.OnDemandPrice*f*1.08+rounding
			if p < lo || p > hi {
				t.Errorf("%s in %s: spot %f outside [%f, %f] (on-demand %f x %.2f x [0.92, 1.08])", info.Name, z, p, lo, hi, info.OnDemandPrice, f)
			}
			if p >= info.OnDemandPrice || p <= 0 {
				t.Errorf("%s in %s: spot %f is not below on-demand %f", info.Name, z, p, info.OnDemandPrice)
			}
		}
	}
}

func TestSpotPriceIsDeterministicAndVariesByZone(t *testing.T) {
	first := catalogue.InstanceTypes(catalogue.Builtin(), catalogue.DefaultOptions())
	second := catalogue.InstanceTypes(catalogue.Builtin(), catalogue.DefaultOptions())
	varies := 0
	for i, it := range first {
		prices := map[float64]bool{}
		for j, o := range it.Offerings {
			if o != second[i].Offerings[j] {
				t.Errorf("%s: offering %d differs between runs: %+v vs %+v", it.Name, j, o, second[i].Offerings[j])
			}
			if o.CapacityType == "spot" {
				prices[o.Price] = true
			}
		}
		if len(prices) > 1 {
			varies++
		}
	}
	// A hash of (type, zone) gives three equal zone factors for a type about
	// once in a million; most types must show different spot prices per zone.
	if varies < len(first)*9/10 {
		t.Errorf("only %d of %d types have spot prices that differ between zones", varies, len(first))
	}
}

func TestSpotPriceOfAnUndocumentedCategoryStaysBelowOnDemand(t *testing.T) {
	info := catalogue.Info{Name: "x9.large", Family: "x9", Category: "x", OnDemandPrice: 1}
	if p := catalogue.SpotPrice(info, "us-east-1a"); p <= 0 || p >= 1 {
		t.Errorf("spot price %f for an on-demand price of 1", p)
	}
}
