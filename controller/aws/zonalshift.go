package aws

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stowage-dev/stowage/controller/aws/awserrors"
	"github.com/stowage-dev/stowage/controller/aws/sdk"
	"github.com/stowage-dev/stowage/controller/aws/zonalshift"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
)

// zonalShifts is the provider's view of the zones ARC shifted the cluster
// away from; a nil one (no ARC client or no cluster ARN) shifts nothing.
type zonalShifts struct {
	p   *zonalshift.Provider
	log hclog.Logger
	mu  sync.Mutex
	// reported are the zone IDs the last pass logged and exported as shifted.
	reported []string
}

func newZonalShifts(api sdk.ARCZonalShiftAPI, opts Options, log hclog.Logger) *zonalShifts {
	if api == nil || opts.ClusterARN == "" {
		return nil
	}
	return &zonalShifts{p: zonalshift.NewProvider(api, opts.ClusterARN, opts.Clock), log: log.Named("zonalshift")}
}

// RefreshZonalShifts reads the cluster's zonal shifts and the region's
// autoshifts (Start runs it every Options.ZonalShiftInterval), and logs and
// exports the zones that became shifted or returned.
func (c *CloudProvider) RefreshZonalShifts(ctx context.Context) error {
	if c.shifts == nil {
		return nil
	}
	err := awserrors.WrapUnauthorized(c.shifts.p.Refresh(ctx))
	c.shifts.report()
	return err
}

func (z *zonalShifts) report() {
	active := z.p.Active()
	now := zonalshift.Zones(active)
	z.mu.Lock()
	defer z.mu.Unlock()
	for _, id := range now {
		if !slices.Contains(z.reported, id) {
			s := active[id]
			z.log.Warn("zone shifted away from: launches avoid it until the shift ends", "zone_id", id, "reason", s.Reason, "expiry", s.Expiry)
		}
		ZonalShiftActive.WithLabelValues(id).Set(1)
	}
	for _, id := range z.reported {
		if !slices.Contains(now, id) {
			z.log.Info("zonal shift ended: launches use the zone again", "zone_id", id)
			ZonalShiftActive.WithLabelValues(id).Set(0)
		}
	}
	z.reported = now
}

// nextExpiry is the earliest expiry of an active zonal shift after now, for
// an extra pass that reports the zone's return on time; zero for none.
func (z *zonalShifts) nextExpiry(now time.Time) time.Time {
	var next time.Time
	for _, s := range z.p.Active() {
		if s.Expiry.After(now) && (next.IsZero() || s.Expiry.Before(next)) {
			next = s.Expiry
		}
	}
	return next
}

// shifted reports whether a zone (its ID) is shifted away from now.
func (z *zonalShifts) shifted(zoneID string) bool {
	if z == nil {
		return false
	}
	_, ok := z.p.Active()[zoneID]
	return ok
}

// withoutShiftedZones marks unavailable, in copies, the offerings in the
// zones of r's subnets that are shifted away from, so that the solver plans
// no node there; the catalogue's own types are left as they are.
func (z *zonalShifts) withoutShiftedZones(types []*cloudprovider.InstanceType, r *Resolved) []*cloudprovider.InstanceType {
	if z == nil {
		return types
	}
	active := z.p.Active()
	if len(active) == 0 {
		return types
	}
	zones := map[string]string{} // zone name -> why
	for _, s := range r.Subnets {
		if sh, ok := active[s.ZoneID]; ok {
			zones[s.Zone] = "zonal shift away from " + s.ZoneID + ": " + sh.Reason
		}
	}
	if len(zones) == 0 {
		return types
	}
	out := make([]*cloudprovider.InstanceType, len(types))
	for i, it := range types {
		if !slices.ContainsFunc(it.Offerings, func(o cloudprovider.Offering) bool { return zones[o.Zone] != "" && o.Available }) {
			out[i] = it
			continue
		}
		cp := *it
		cp.Offerings = slices.Clone(it.Offerings)
		for j := range cp.Offerings {
			if why := zones[cp.Offerings[j].Zone]; why != "" {
				cp.Offerings[j].Available, cp.Offerings[j].UnavailableReason = false, why
			}
		}
		out[i] = &cp
	}
	return out
}
