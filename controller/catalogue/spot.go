package catalogue

import "hash/fnv"

// The spot price model. The data holds on-demand prices only, so spot prices are
// modelled: the on-demand price times the category's typical spot fraction, times
// a per-(type, zone) factor between 0.92 and 1.08 so that zones differ the way
// real spot markets do. The factor comes from a hash of the names, so the model is
// deterministic. The live AWS layer replaces it with DescribeSpotPriceHistory.
var spotFraction = map[string]float64{
	"t": 0.32, "c": 0.36, "m": 0.38, "r": 0.35,
	"g": 0.42, "p": 0.55, "inf": 0.40, "trn": 0.45,
}

const defaultSpotFraction = 0.40

// SpotPrice is the modelled spot price of a type in a zone, in US dollars per hour.
func SpotPrice(info Info, zone string) float64 {
	f, ok := spotFraction[info.Category]
	if !ok {
		f = defaultSpotFraction
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(info.Name + "/" + zone))
	jitter := 0.92 + 0.16*float64(h.Sum32()%1000)/999
	return round6(info.OnDemandPrice * f * jitter)
}

func round6(f float64) float64 {
	const scale = 1e6
	return float64(int64(f*scale+0.5)) / scale
}
