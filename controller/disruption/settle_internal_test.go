package disruption

import (
	"testing"
	"time"

	"github.com/stowage-dev/stowage/controller/cloudprovider"
)

// watchTypes is c7i.xlarge and c7i.2xlarge spot and m7i.xlarge spot in one
// zone, at the given prices, available unless named in short.
func watchTypes(price float64, recent int, short ...string) map[string][]*cloudprovider.InstanceType {
	var its []*cloudprovider.InstanceType
	for _, name := range []string{"c7i.xlarge", "c7i.2xlarge", "m7i.xlarge"} {
		o := cloudprovider.Offering{Zone: "us-east-1a", CapacityType: "spot", Price: price, Available: true, RecentShortages: recent}
		for _, s := range short {
			if s == name {
				o.Available = false
			}
		}
		its = append(its, &cloudprovider.InstanceType{Name: name, Offerings: cloudprovider.Offerings{o}})
	}
	return map[string][]*cloudprovider.InstanceType{"web": its}
}

func TestOfferingWatch(t *testing.T) {
	t0 := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	key := func(name string) OfferingKey { return OfferingKey{name, "us-east-1a", "spot"} }
	var w offeringWatch
	steps := []struct {
		at    time.Duration
		types map[string][]*cloudprovider.InstanceType
		want  map[string]time.Duration // name -> settled since (from t0); -1 for the zero time; missing: not settled
	}{
		{0, watchTypes(0.10, 0), map[string]time.Duration{"c7i.xlarge": -1, "c7i.2xlarge": -1, "m7i.xlarge": -1}},
		// c7i.xlarge goes short: it is not settled, and its family in the zone waits from its shortage.
		{time.Minute, watchTypes(0.10, 1, "c7i.xlarge"), map[string]time.Duration{"c7i.2xlarge": time.Minute, "m7i.xlarge": -1}},
		{3 * time.Minute, watchTypes(0.10, 1, "c7i.xlarge"), map[string]time.Duration{"c7i.2xlarge": 3 * time.Minute, "m7i.xlarge": -1}},
		// Its memory lapses: settled from then.
		{4 * time.Minute, watchTypes(0.10, 1), map[string]time.Duration{"c7i.xlarge": 4 * time.Minute, "c7i.2xlarge": 3 * time.Minute, "m7i.xlarge": -1}},
		// A price within the band changes nothing; out of it, settling starts over.
		{5 * time.Minute, watchTypes(0.105, 1), map[string]time.Duration{"c7i.xlarge": 4 * time.Minute, "c7i.2xlarge": 3 * time.Minute, "m7i.xlarge": -1}},
		{6 * time.Minute, watchTypes(0.125, 1), map[string]time.Duration{"c7i.xlarge": 6 * time.Minute, "c7i.2xlarge": 6 * time.Minute, "m7i.xlarge": 6 * time.Minute}},
		// An hour after it was last short, its family no longer waits on it.
		{64 * time.Minute, watchTypes(0.125, 0), map[string]time.Duration{"c7i.xlarge": 6 * time.Minute, "c7i.2xlarge": 6 * time.Minute, "m7i.xlarge": 6 * time.Minute}},
	}
	for i, s := range steps {
		got := w.observe(s.types, t0.Add(s.at))
		if len(got) != len(s.want) {
			t.Fatalf("step %d: settled %v, want %v", i, got, s.want)
		}
		for name, since := range s.want {
			want := t0.Add(since)
			if since < 0 {
				want = time.Time{}
			}
			if at, ok := got[key(name)]; !ok || !at.Equal(want) {
				t.Errorf("step %d: %s settled since %v (%v), want %v", i, name, at, ok, want)
			}
		}
	}
	// An offering first seen with a recent shortage (a restart) waits from then.
	fresh := offeringWatch{}
	if got := fresh.observe(watchTypes(0.10, 1), t0)[key("m7i.xlarge")]; !got.Equal(t0) {
		t.Errorf("first seen with a recent shortage: settled since %v, want %v", got, t0)
	}
}
