package aws

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/awserrors"
	"github.com/stowage-dev/stowage/controller/aws/cache"
	"github.com/stowage-dev/stowage/controller/aws/instance"
	"github.com/stowage-dev/stowage/controller/aws/subnet"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// Create launches the claim's instance: capacity types in the order reserved,
// spot, on-demand (those the claim allows and that have an offering not known
// to be short), cheapest offerings first within one, retrying at once without
// the offerings a fleet reported short.
func (c *CloudProvider) Create(ctx context.Context, claim *v1alpha1.NodeClaim) (*v1alpha1.NodeClaim, error) {
	if claim.Spec.NodeClassRef == nil {
		return nil, cloudprovider.NewNodeClassNotReadyError(fmt.Errorf("nodeclaim %s has no nodeClassRef", claim.Name))
	}
	nc, r, err := c.classFor(ctx, claim.Spec.NodeClassRef.Name)
	if err != nil {
		return nil, err
	}
	types, err := c.types.List(ctx, query(nc, r))
	if err != nil {
		return nil, c.launchError(err)
	}
	if in, found, err := c.instances.FindByClaim(ctx, claim.Name); err != nil || found {
		if err != nil {
			return nil, c.launchError(err)
		}
		i := slices.IndexFunc(types, func(it *cloudprovider.InstanceType) bool { return it.Name == in.Type })
		return c.launched(claim, in, at(types, i), in.ImageID, v1alpha1.NodeClassHash(nc)), nil
	}
	candidates := compatible(types, claimRequirements(claim), scheduling.FromList(claim.Spec.Resources.Requests))
	return c.launch(ctx, claim, nc, r, types, candidates)
}

func at(types []*cloudprovider.InstanceType, i int) *cloudprovider.InstanceType {
	if i < 0 {
		return nil
	}
	return types[i]
}

// launch makes up to LaunchAttempts fleets for the claim from its candidate
// types; types is the whole catalogue, for shortages that reach beyond them.
func (c *CloudProvider) launch(ctx context.Context, claim *v1alpha1.NodeClaim, nc *v1alpha1.NodeClass, r *Resolved,
	types, candidates []*cloudprovider.InstanceType) (*v1alpha1.NodeClaim, error) {
	reqs := claimRequirements(claim)
	var tried []cloudprovider.UnavailableOffering
	var denied []error // the fleets' IAM denials, once each
	for range c.opts.LaunchAttempts {
		p, err := c.plan(ctx, claim, nc, r, candidates, reqs)
		if err != nil {
			return nil, err
		}
		if len(p.req.Overrides) == 0 {
			break
		}
		in, short, err := c.instances.Launch(ctx, p.req)
		c.markShort(p, short, types)
		c.countDenials(claim, short)
		tried = append(tried, short...)
		if awserrors.IsLaunchTemplateNotFound(err) {
			c.templates.Invalidate() // deleted under us (the GC, or by hand): recreate and retry
			continue
		}
		var fe *instance.FleetError
		_, spot := awserrors.AsSpotRole(err)
		if spot {
			c.avoidSpot(types) // no spot launch can succeed until the role exists
		}
		if errors.As(err, &fe) && (spot || len(awserrors.Unauthorized(err)) > 0) {
			denied = appendNew(denied, fe.Errs...) // the denied offerings are marked: try the others
			continue
		}
		if err != nil {
			return nil, c.launchError(err)
		}
		if in != nil {
			in.ImageID = p.images[in.Type]
			c.recordLaunch(claim, in)
			return c.launched(claim, in, p.types[in.Type], in.ImageID, v1alpha1.NodeClassHash(nc)), nil
		}
	}
	if len(denied) > 0 {
		return nil, c.launchError(errors.Join(denied...))
	}
	return nil, cloudprovider.NewInsufficientCapacityError("no allowed offering could be launched for nodeclaim "+claim.Name, tried...)
}

// avoidSpot marks every spot offering unavailable for a while.
func (c *CloudProvider) avoidSpot(types []*cloudprovider.InstanceType) {
	for _, it := range types {
		for _, o := range it.Offerings {
			if o.CapacityType == v1alpha1.CapacityTypeSpot {
				c.MarkOfferingUnavailable(it.Name, o.Zone, o.CapacityType, awserrors.CodeSpotRoleNotPermitted)
			}
		}
	}
}

func appendNew(list []error, errs ...error) []error {
	for _, e := range errs {
		if !slices.ContainsFunc(list, func(x error) bool { return x.Error() == e.Error() }) {
			list = append(list, e)
		}
	}
	return list
}

// countDenials counts and logs the offerings IAM denied a launch of.
func (c *CloudProvider) countDenials(claim *v1alpha1.NodeClaim, short []cloudprovider.UnavailableOffering) {
	for _, s := range short {
		if awserrors.IsUnauthorizedCode(s.Reason) || s.Reason == awserrors.CodeSpotRoleNotPermitted {
			LaunchDenials.WithLabelValues(s.CapacityType).Inc()
			c.log.Warn("IAM denied a launch; the offering is avoided for a while", "nodeclaim", claim.Name,
				"instance_type", s.InstanceType, "zone", s.Zone, "capacity_type", s.CapacityType, "reason", s.Reason)
		}
	}
}

func (c *CloudProvider) recordLaunch(claim *v1alpha1.NodeClaim, in *instance.Instance) {
	c.instances.Remember(claim.Name, in)
	c.unavailable.MarkAvailable(cache.Offering{InstanceType: in.Type, Zone: in.Zone, CapacityType: in.CapacityType})
	if in.ReservationID != "" {
		c.reservations.Launched(in.ReservationID)
	}
	c.log.Debug("launched instance", "nodeclaim", claim.Name, "instance_id", in.ID, "instance_type", in.Type,
		"zone", in.Zone, "capacity_type", in.CapacityType, "capacity_reservation", in.ReservationID)
}

// launchError maps a failed API call onto the CloudProvider error contract: an
// authorisation failure becomes a CreateError naming every missing permission.
func (c *CloudProvider) launchError(err error) error {
	if se, ok := awserrors.AsSpotRole(err); ok {
		return cloudprovider.NewCreateError(err, se.Reason(), se.Message())
	}
	if ues := awserrors.Unauthorized(err); len(ues) > 0 {
		msgs := make([]string, 0, len(ues))
		for _, ue := range ues {
			msgs = append(msgs, ue.Message())
		}
		return cloudprovider.NewCreateError(err, ues[0].Reason(), strings.Join(msgs, "; "))
	}
	if code := awserrors.Code(err); awserrors.IsCapacityCode(code) {
		return cloudprovider.NewInsufficientCapacityError(code)
	}
	return fmt.Errorf("launching instance: %w", err)
}

// schedulingKeys are the labels an instance type carries and a claim may constrain.
var schedulingKeys = func() map[string]bool {
	keys := map[string]bool{}
	for k := range v1alpha1.WellKnownLabels {
		keys[k] = k != v1alpha1.LabelNodePool && k != corev1.LabelHostname
	}
	return keys
}()

func claimRequirements(claim *v1alpha1.NodeClaim) scheduling.Requirements {
	all := scheduling.FromAPI(claim.Spec.Requirements)
	out := scheduling.Requirements{}
	for k, r := range all {
		if schedulingKeys[k] {
			out[k] = r
		}
	}
	return out
}

func compatible(types []*cloudprovider.InstanceType, reqs scheduling.Requirements, requests scheduling.Resources) []*cloudprovider.InstanceType {
	var out []*cloudprovider.InstanceType
	for _, it := range types {
		if it.Requirements.Intersects(reqs) && requests.Fits(it.Allocatable()) {
			out = append(out, it)
		}
	}
	return out
}

// chooseCapacityType returns the first capacity type, in the order reserved,
// spot, on-demand, that the claim allows and that has a usable offering.
func (c *CloudProvider) chooseCapacityType(candidates []*cloudprovider.InstanceType, reqs scheduling.Requirements, zones map[string]subnet.Subnet) string {
	allowed := reqs.Get(v1alpha1.LabelCapacityType)
	for _, ct := range v1alpha1.CapacityTypes {
		if !allowed.Has(ct) {
			continue
		}
		for _, it := range candidates {
			for _, o := range it.Offerings {
				if o.CapacityType == ct && c.usable(it.Name, o, reqs, zones) {
					return ct
				}
			}
		}
	}
	return ""
}

// usable: the class has a subnet in the offering's zone, the cluster is not
// shifted away from it (ARC), the claim allows the zone, and now (not when
// the types were listed, as a Create's earlier fleets may have changed it)
// the shortage memory does not avoid the offering and its reservation, if
// any, has room.
func (c *CloudProvider) usable(name string, o cloudprovider.Offering, reqs scheduling.Requirements, zones map[string]subnet.Subnet) bool {
	sn, hasSubnet := zones[o.Zone]
	return hasSubnet && !c.shifts.shifted(sn.ZoneID) && reqs.Get(corev1.LabelTopologyZone).Has(o.Zone) &&
		(o.ReservationID == "" || c.reservationTakes(o.ReservationID)) &&
		!c.unavailable.IsUnavailable(cache.Offering{InstanceType: name, Zone: o.Zone, CapacityType: o.CapacityType})
}

// reservationTakes reports whether a reservation takes a launch now: it has
// room, and EC2 takes launches into it on the clock (a block from its start
// to 30 minutes before its end). The solver already keeps a block to its
// pool's narrower window; this is the last check before EC2.
func (c *CloudProvider) reservationTakes(id string) bool {
	r, ok := c.reservations.Get(id)
	return ok && r.Available > 0 && r.Launchable(c.opts.Clock.Now())
}

type offer struct {
	it          *cloudprovider.InstanceType
	zone        string
	price       float64
	reservation string
	room        int  // free capacity of the reservation
	block       bool // the reservation is a Capacity Block
}

// rank lists usable offerings of one capacity type, cheapest first, at most
// limit, one per (instance type, zone): for reserved, the reservation with the
// most room.
func (c *CloudProvider) rank(candidates []*cloudprovider.InstanceType, ct string, reqs scheduling.Requirements, zones map[string]subnet.Subnet, limit int) []offer {
	var out []offer
	for _, it := range candidates {
		first := len(out)
		for _, o := range it.Offerings {
			if o.CapacityType != ct || !c.usable(it.Name, o, reqs, zones) {
				continue
			}
			of := offer{it, o.Zone, o.Price, o.ReservationID, 0, o.ReservationType == v1alpha1.CapacityReservationTypeCapacityBlock}
			if o.ReservationID != "" {
				of.room = c.reservations.Room(o.ReservationID)
			}
			if j := slices.IndexFunc(out[first:], func(x offer) bool { return x.zone == o.Zone }); j >= 0 {
				if of.room > out[first+j].room {
					out[first+j] = of
				}
				continue
			}
			out = append(out, of)
		}
	}
	slices.SortStableFunc(out, func(a, b offer) int {
		return cmp.Or(cmp.Compare(a.price, b.price), cmp.Compare(a.it.Name, b.it.Name), cmp.Compare(a.zone, b.zone))
	})
	return out[:min(limit, len(out))]
}

// oneMarket keeps the offers one fleet can launch: a Capacity Block fleet
// takes only blocks (EC2 never falls back from one), any other fleet no
// block. The cheapest offer decides, Capacity Blocks first at equal price.
func oneMarket(offers []offer) ([]offer, bool) {
	if len(offers) == 0 {
		return offers, false
	}
	block := slices.ContainsFunc(offers, func(o offer) bool { return o.block && o.price <= offers[0].price })
	return slices.DeleteFunc(offers, func(o offer) bool { return o.block != block }), block
}
