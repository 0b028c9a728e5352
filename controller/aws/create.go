package aws

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/awserrors"
	"github.com/stowage-dev/stowage/controller/aws/cache"
	"github.com/stowage-dev/stowage/controller/aws/subnet"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// Create launches the claim's instance: cheapest allowed offerings first, spot
// before on-demand when both are allowed, retrying at once without the
// offerings a fleet reported short.
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
		return nil, err
	}
	byName := make(map[string]*cloudprovider.InstanceType, len(types))
	for _, it := range types {
		byName[it.Name] = it
	}
	if in, found, err := c.instances.FindByClaim(ctx, claim.Name); err != nil || found {
		if err != nil {
			return nil, c.launchError(err, "DescribeInstances")
		}
		return launched(claim, in, byName[in.Type], in.ImageID, r.Hash), nil
	}
	candidates := compatible(types, claimRequirements(claim), scheduling.FromList(claim.Spec.Resources.Requests))
	return c.launch(ctx, claim, nc, r, candidates)
}

func (c *CloudProvider) launch(ctx context.Context, claim *v1alpha1.NodeClaim, nc *v1alpha1.NodeClass, r *Resolved, candidates []*cloudprovider.InstanceType) (*v1alpha1.NodeClaim, error) {
	reqs := claimRequirements(claim)
	var tried []cloudprovider.UnavailableOffering
	for range c.opts.LaunchAttempts {
		p, err := c.plan(ctx, claim, nc, r, candidates, reqs)
		if err != nil {
			return nil, err
		}
		if len(p.req.Overrides) == 0 {
			break
		}
		in, short, err := c.instances.Launch(ctx, p.req)
		c.markShort(short)
		tried = append(tried, short...)
		if err != nil {
			return nil, c.launchError(err, "CreateFleet")
		}
		if in != nil {
			c.unavailable.MarkAvailable(cache.Offering{InstanceType: in.Type, Zone: in.Zone, CapacityType: in.CapacityType})
			c.opts.Logger.Debug("launched instance", "nodeclaim", claim.Name, "instance_id", in.ID,
				"instance_type", in.Type, "zone", in.Zone, "capacity_type", in.CapacityType)
			return launched(claim, in, p.types[in.Type], p.images[in.Type], r.Hash), nil
		}
	}
	return nil, cloudprovider.NewInsufficientCapacityError("no allowed offering could be launched for nodeclaim "+claim.Name, tried...)
}

func (c *CloudProvider) markShort(short []cloudprovider.UnavailableOffering) {
	for _, s := range short {
		d := c.unavailable.MarkUnavailable(cache.Offering{InstanceType: s.InstanceType, Zone: s.Zone, CapacityType: s.CapacityType})
		c.opts.Logger.Debug("offering short", "instance_type", s.InstanceType, "zone", s.Zone,
			"capacity_type", s.CapacityType, "reason", s.Reason, "avoid_for", d.String())
	}
}

// launchError maps a failed API call onto the CloudProvider error contract.
func (c *CloudProvider) launchError(err error, op string) error {
	switch code := awserrors.Code(err); {
	case awserrors.IsUnauthorized(err):
		action := awserrors.MissingAction(err, "ec2", op)
		return cloudprovider.NewCreateError(err, "Unauthorized", "missing permission "+action)
	case awserrors.IsCapacityCode(code):
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

// chooseCapacityType prefers spot when the claim allows it and some allowed
// spot offering is not short; otherwise on-demand, if allowed.
func (c *CloudProvider) chooseCapacityType(candidates []*cloudprovider.InstanceType, reqs scheduling.Requirements, zones map[string]subnet.Subnet) string {
	allowed := reqs.Get(v1alpha1.LabelCapacityType)
	for _, ct := range []string{v1alpha1.CapacityTypeSpot, v1alpha1.CapacityTypeOnDemand} {
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

func (c *CloudProvider) usable(name string, o cloudprovider.Offering, reqs scheduling.Requirements, zones map[string]subnet.Subnet) bool {
	_, hasSubnet := zones[o.Zone]
	return hasSubnet && reqs.Get(corev1.LabelTopologyZone).Has(o.Zone) &&
		!c.unavailable.IsUnavailable(cache.Offering{InstanceType: name, Zone: o.Zone, CapacityType: o.CapacityType})
}

type offer struct {
	it    *cloudprovider.InstanceType
	zone  string
	price float64
}

// rank lists usable offerings of one capacity type, cheapest first, at most max.
func (c *CloudProvider) rank(candidates []*cloudprovider.InstanceType, ct string, reqs scheduling.Requirements, zones map[string]subnet.Subnet, limit int) []offer {
	var out []offer
	for _, it := range candidates {
		for _, o := range it.Offerings {
			if o.CapacityType == ct && c.usable(it.Name, o, reqs, zones) {
				out = append(out, offer{it, o.Zone, o.Price})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].price != out[j].price {
			return out[i].price < out[j].price
		}
		return out[i].it.Name+out[i].zone < out[j].it.Name+out[j].zone
	})
	return out[:min(limit, len(out))]
}
