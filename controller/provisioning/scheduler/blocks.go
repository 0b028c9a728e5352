package scheduler

import (
	"slices"
	"time"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
)

// windowed returns the pool's instance types with every offering of a
// reservation that ends (a Capacity Block) unavailable outside its window
// at the snapshot's instant: before its start, and from its end less the
// pool's capacityBlockLeadTime on, when the capacity block controller moves
// its nodes off it. A type with no such offering is returned as it is, one
// with one as a copy; without Snapshot.Now, every type as it is.
func (sv *solver) windowed(np *v1alpha1.NodePool) []*cloudprovider.InstanceType {
	types := sv.snapshot.InstanceTypes[np.Name]
	now := sv.snapshot.Now
	if now.IsZero() {
		return types
	}
	lead := np.BlockLeadTime()
	var out []*cloudprovider.InstanceType
	for i, it := range types {
		closed := slices.IndexFunc(it.Offerings, func(o cloudprovider.Offering) bool { return o.Available && !InBlockWindow(o, now, lead) })
		if closed < 0 {
			if out != nil {
				out = append(out, it)
			}
			continue
		}
		if out == nil {
			out = append(make([]*cloudprovider.InstanceType, 0, len(types)), types[:i]...)
		}
		cp := *it
		cp.Offerings = slices.Clone(it.Offerings)
		for j, o := range cp.Offerings {
			cp.Offerings[j].Available = o.Available && InBlockWindow(o, now, lead)
		}
		out = append(out, &cp)
	}
	if out == nil {
		return types
	}
	return out
}

// InBlockWindow reports whether an offering may take a new node at now
// under a lead time: any offering without an end, and one that ends from
// its start until its end less lead.
func InBlockWindow(o cloudprovider.Offering, now time.Time, lead time.Duration) bool {
	if o.ReservationEnd.IsZero() {
		return true
	}
	return !now.Before(o.ReservationStart) && now.Before(o.ReservationEnd.Add(-lead))
}
