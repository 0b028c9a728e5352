package disruption

import (
	"math"
	"strings"
	"time"

	"github.com/stowage-dev/stowage/controller/cloudprovider"
)

// Settling: pods are moved onto an offering that came back from a shortage
// only once it has stayed available, at a steady price, for a while. An
// offering whose shortage memory has just lapsed may well still be short (the
// memory lapses on a timer, not on news of capacity), and moving pods onto it
// would fail and roll back, or succeed only to be interrupted.
const (
	// ConsolidationSettleTime is how long an offering must have been
	// available, at a steady price, before consolidation launches a
	// replacement on it; the return to preferred capacity waits its pool's
	// returnAfter.
	ConsolidationSettleTime = 10 * time.Minute
	// PriceBand is how far, as a share, an offering's price may move from the
	// price it settled at before its settling starts over: a spot price that
	// jumps says capacity is tight.
	PriceBand = 0.1
	// MaxRecentShortages: nothing is moved back onto an offering that went
	// short this many times within the last hour (it flaps).
	MaxRecentShortages = 2
)

// OfferingKey names an offering whichever pool lists it.
type OfferingKey struct {
	InstanceType, Zone, CapacityType string
}

// watched is what the watch remembers of one offering.
type watched struct {
	// since is when it was last seen coming back (available again after a
	// shortage, or at a price out of the band); zero for never short.
	since time.Time
	price float64
	// short is when it was last seen short; zero for not within the hour.
	short time.Time
}

// offeringWatch remembers, from round to round, since when each offering has
// been available at a steady price as this controller saw it. An offering
// seen available for the first time with no shortage in the last hour counts
// as available for ever: a restart does not hold moves back for a settling
// time. Shortages come in groups (an instance family's sizes share hosts in
// a zone, and a spot shortage rarely spares them), and an offering nothing
// has tried says nothing: so an offering counts as settled only from the
// latest shortage of any offering of its family, zone and capacity type. The
// memory lives in the controller, not in the methods, which keep none; a new
// leader starts it afresh, as it starts the shortage memory.
type offeringWatch struct {
	seen map[OfferingKey]watched
}

// observe updates the memory with the pools' offerings at now and returns
// since when each available offering has been settled.
func (w *offeringWatch) observe(types map[string][]*cloudprovider.InstanceType, now time.Time) map[OfferingKey]time.Time {
	next := make(map[OfferingKey]watched, len(w.seen))
	down := map[OfferingKey]bool{}
	for _, its := range types {
		for _, it := range its {
			for _, o := range it.Offerings {
				k := OfferingKey{it.Name, o.Zone, o.CapacityType}
				if !o.Available {
					down[k] = true
				}
				if _, done := next[k]; !done {
					next[k] = w.next(k, o, now)
				}
			}
		}
	}
	groups := map[OfferingKey]time.Time{}
	for k, s := range next {
		if down[k] {
			s.short = now
			next[k] = s
		}
		g := group(k)
		groups[g] = maxTime(groups[g], s.short)
	}
	w.seen = next
	out := make(map[OfferingKey]time.Time, len(next))
	for k, s := range next {
		if !down[k] {
			out[k] = maxTime(s.since, groups[group(k)])
		}
	}
	return out
}

// next is what the watch remembers of an offering at now, from what it
// remembered and what the cloud says.
func (w *offeringWatch) next(k OfferingKey, o cloudprovider.Offering, now time.Time) watched {
	prev, ok := w.seen[k]
	if !prev.short.IsZero() && now.Sub(prev.short) >= time.Hour {
		prev.short = time.Time{}
	}
	switch {
	case !o.Available:
		return prev
	case !ok && o.RecentShortages == 0:
		return watched{price: o.Price}
	case !ok, moved(prev.price, o.Price), prev.short.After(prev.since):
		return watched{since: now, price: o.Price, short: prev.short}
	}
	return prev
}

// group is the family, zone and capacity type an offering shares shortages
// with: "c7i" of c7i.xlarge.
func group(k OfferingKey) OfferingKey {
	family, _, _ := strings.Cut(k.InstanceType, ".")
	return OfferingKey{family, k.Zone, k.CapacityType}
}

// moved reports whether price is out of the band around ref.
func moved(ref, price float64) bool {
	if ref <= 0 {
		return price > 0
	}
	return math.Abs(price-ref)/ref > PriceBand
}

// settled reports whether pods may be moved onto the offering of it now: it
// is available, went short fewer than MaxRecentShortages times in the last
// hour, and has been available at a steady price for at least wait. A round
// without a settling memory (one built by hand) counts every available
// offering as settled for ever.
func (r *Round) settled(it *cloudprovider.InstanceType, o cloudprovider.Offering, wait time.Duration) bool {
	at, ok := r.settlesAt(it, o, wait)
	return ok && !r.Now.Before(at)
}

// settlesAt is when the offering will have been settled for wait, if it
// stays as it is; false when it is not available or flaps.
func (r *Round) settlesAt(it *cloudprovider.InstanceType, o cloudprovider.Offering, wait time.Duration) (time.Time, bool) {
	if !o.Available || o.RecentShortages >= MaxRecentShortages {
		return time.Time{}, false
	}
	var since time.Time
	if r.Settled != nil {
		var ok bool
		if since, ok = r.Settled[OfferingKey{it.Name, o.Zone, o.CapacityType}]; !ok {
			return time.Time{}, false
		}
	}
	return since.Add(wait), true
}

// settledTypes returns the pools' instance types with only the offerings
// keep accepts among those settled for wait; a type left with none is left
// out, and so is a pool left with no type. keep nil accepts every offering.
func (r *Round) settledTypes(wait time.Duration, keep func(pool string, o cloudprovider.Offering) bool) map[string][]*cloudprovider.InstanceType {
	out := map[string][]*cloudprovider.InstanceType{}
	for pool, its := range r.Snapshot.InstanceTypes {
		for _, it := range its {
			var ofs cloudprovider.Offerings
			for _, o := range it.Offerings {
				if (keep == nil || keep(pool, o)) && r.settled(it, o, wait) {
					ofs = append(ofs, o)
				}
			}
			if len(ofs) == 0 {
				continue
			}
			if len(ofs) < len(it.Offerings) {
				cp := *it
				cp.Offerings = ofs
				it = &cp
			}
			out[pool] = append(out[pool], it)
		}
	}
	return out
}
