package instance

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/awserrors"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
)

// MaxOverrides is how many (instance type, subnet) pairs one fleet may list.
const MaxOverrides = 60

// Override is one (instance type, subnet) candidate, launched from a template.
type Override struct {
	InstanceType   string
	Zone           string
	SubnetID       string
	LaunchTemplate string // template name
	Price          float64
	// ReservationID is the Capacity Reservation a reserved override's template targets.
	ReservationID string
}

// LaunchRequest is one instant fleet for one claim.
type LaunchRequest struct {
	Claim string
	// CapacityType is reserved, spot or on-demand; a reserved fleet is an
	// on-demand fleet whose templates target capacity reservations, or, with
	// CapacityBlock, a capacity-block fleet whose templates target blocks.
	CapacityType string
	// CapacityBlock launches into Capacity Blocks: the fleet's
	// DefaultTargetCapacityType is capacity-block (and no override is
	// anything else, since EC2 never falls back from a block to On-Demand).
	CapacityBlock bool
	Overrides     []Override // ranked, cheapest first, at most one per (instance type, subnet)
	Tags          map[string]string
}

// Launch makes one CreateFleet call. It returns the instance started, or nil,
// with the offerings EC2 would not launch: short of capacity, or denied by
// IAM (Reason UnauthorizedOperation). The error is the call's own, or, when
// nothing launched, every error of the fleet that was not a shortage
// (denials as *awserrors.UnauthorizedError), joined.
func (p *Provider) Launch(ctx context.Context, req LaunchRequest) (*Instance, []cloudprovider.UnavailableOffering, error) {
	in := p.fleetInput(req)
	out, err := p.ec2.CreateFleet(ctx, in)
	if err != nil {
		return nil, nil, fmt.Errorf("creating fleet: %w", err)
	}
	short, failed := shortages(out.Errors, req)
	for _, fi := range out.Instances {
		if len(fi.InstanceIds) == 0 || fi.LaunchTemplateAndOverrides == nil || fi.LaunchTemplateAndOverrides.Overrides == nil {
			continue
		}
		o := fi.LaunchTemplateAndOverrides.Overrides
		ov := overrideOf(req, string(o.InstanceType), aws.ToString(o.SubnetId))
		inst := &Instance{ID: fi.InstanceIds[0], Type: string(o.InstanceType), SubnetID: aws.ToString(o.SubnetId),
			Zone: ov.Zone, CapacityType: req.CapacityType, State: "pending", Tags: req.Tags, ReservationID: ov.ReservationID}
		p.unfilled.forget(req.Claim)
		return inst, short, nil
	}
	// EC2 would give this answer again to the same token: the claim's next
	// fleet is a new request.
	p.unfilled.add(req.Claim)
	if len(failed) > 0 {
		return nil, short, &FleetError{Errs: failed}
	}
	return nil, short, nil
}

// FleetError is every error an instant fleet that launched nothing reported
// besides its shortages: the call succeeded, its launches did not.
type FleetError struct {
	// Errs are the errors, once each; IAM's denials as *awserrors.UnauthorizedError.
	Errs []error
}

func (e *FleetError) Error() string {
	msgs := make([]string, 0, len(e.Errs))
	for _, err := range e.Errs {
		msgs = append(msgs, err.Error())
	}
	return "creating fleet: " + strings.Join(msgs, "; ")
}

// Unwrap returns the errors.
func (e *FleetError) Unwrap() []error { return e.Errs }

// overrideOf finds the override a fleet answer is about; the request has at
// most one per (instance type, subnet).
func overrideOf(req LaunchRequest, instanceType, subnetID string) Override {
	for _, o := range req.Overrides {
		if o.InstanceType == instanceType && o.SubnetID == subnetID {
			return o
		}
	}
	for _, o := range req.Overrides {
		if o.SubnetID == subnetID {
			return Override{Zone: o.Zone}
		}
	}
	return Override{}
}

// shortages sorts a fleet's errors: the offerings EC2 would not launch
// (short of capacity, or denied by IAM), and every error other than a
// shortage (each denial as an *awserrors.UnauthorizedError), once each.
func shortages(errs []ec2types.CreateFleetError, req LaunchRequest) ([]cloudprovider.UnavailableOffering, []error) {
	var out []cloudprovider.UnavailableOffering
	var failed []error
	seen := map[string]bool{}
	for _, e := range errs {
		code, msg := aws.ToString(e.ErrorCode), aws.ToString(e.ErrorMessage)
		denied := awserrors.IsUnauthorizedCode(code)
		if !awserrors.IsCapacityCode(code) && !seen[code+msg] {
			seen[code+msg] = true
			switch {
			case denied:
				failed = append(failed, awserrors.NewUnauthorized(code, msg))
			case code == awserrors.CodeSpotRoleNotPermitted:
				failed = append(failed, awserrors.NewSpotRoleError(msg))
			default:
				failed = append(failed, fmt.Errorf("%s: %s", code, msg))
			}
		}
		refused := denied || code == awserrors.CodeSpotRoleNotPermitted // the offering will not launch for a while either
		if (!awserrors.IsCapacityCode(code) && !refused) || e.LaunchTemplateAndOverrides == nil || e.LaunchTemplateAndOverrides.Overrides == nil {
			continue
		}
		o := e.LaunchTemplateAndOverrides.Overrides
		out = append(out, cloudprovider.UnavailableOffering{InstanceType: string(o.InstanceType),
			Zone: overrideOf(req, string(o.InstanceType), aws.ToString(o.SubnetId)).Zone, CapacityType: req.CapacityType, Reason: code})
	}
	return out, failed
}

func (p *Provider) fleetInput(req LaunchRequest) *ec2.CreateFleetInput {
	byTemplate := map[string][]ec2types.FleetLaunchTemplateOverridesRequest{}
	var order []string
	var fp strings.Builder
	fmt.Fprintf(&fp, "%s#%d", req.CapacityType, p.unfilled.count(req.Claim))
	if req.CapacityBlock {
		fp.WriteString("/capacity-block")
	}
	for i, o := range req.Overrides {
		if _, ok := byTemplate[o.LaunchTemplate]; !ok {
			order = append(order, o.LaunchTemplate)
		}
		byTemplate[o.LaunchTemplate] = append(byTemplate[o.LaunchTemplate], ec2types.FleetLaunchTemplateOverridesRequest{
			InstanceType: ec2types.InstanceType(o.InstanceType), SubnetId: aws.String(o.SubnetID), Priority: aws.Float64(float64(i)),
		})
		fmt.Fprintf(&fp, "|%s/%s/%s", o.LaunchTemplate, o.InstanceType, o.SubnetID)
	}
	var configs []ec2types.FleetLaunchTemplateConfigRequest
	for _, name := range order {
		configs = append(configs, ec2types.FleetLaunchTemplateConfigRequest{
			LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateName: aws.String(name), Version: aws.String("$Latest")},
			Overrides:                   byTemplate[name],
		})
	}
	in := &ec2.CreateFleetInput{
		Type:                  ec2types.FleetTypeInstant,
		ClientToken:           aws.String(ClientToken(req.Claim, fp.String())),
		LaunchTemplateConfigs: configs,
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{
			TotalTargetCapacity: aws.Int32(1), DefaultTargetCapacityType: ec2types.DefaultTargetCapacityTypeOnDemand},
		TagSpecifications: tagSpecs(req.Tags),
	}
	setMarketOptions(in, req.CapacityType)
	if req.CapacityBlock {
		in.TargetCapacitySpecification.DefaultTargetCapacityType = ec2types.DefaultTargetCapacityTypeCapacityBlock
		in.OnDemandOptions = nil
	}
	return in
}

// setMarketOptions sets the fleet's capacity type and allocation strategy: spot
// price-capacity-optimized, on-demand lowest-price, and reserved as on-demand
// that uses the capacity reservations its templates target first.
func setMarketOptions(in *ec2.CreateFleetInput, capacityType string) {
	switch capacityType {
	case v1alpha1.CapacityTypeSpot:
		in.TargetCapacitySpecification.DefaultTargetCapacityType = ec2types.DefaultTargetCapacityTypeSpot
		in.SpotOptions = &ec2types.SpotOptionsRequest{AllocationStrategy: ec2types.SpotAllocationStrategyPriceCapacityOptimized}
	case v1alpha1.CapacityTypeReserved:
		in.OnDemandOptions = &ec2types.OnDemandOptionsRequest{AllocationStrategy: ec2types.FleetOnDemandAllocationStrategyLowestPrice,
			CapacityReservationOptions: &ec2types.CapacityReservationOptionsRequest{
				UsageStrategy: ec2types.FleetCapacityReservationUsageStrategyUseCapacityReservationsFirst}}
	default:
		in.OnDemandOptions = &ec2types.OnDemandOptionsRequest{AllocationStrategy: ec2types.FleetOnDemandAllocationStrategyLowestPrice}
	}
}

func tagSpecs(tags map[string]string) []ec2types.TagSpecification {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	list := make([]ec2types.Tag, 0, len(keys))
	for _, k := range keys {
		list = append(list, ec2types.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	return []ec2types.TagSpecification{
		{ResourceType: ec2types.ResourceTypeInstance, Tags: list},
		{ResourceType: ec2types.ResourceTypeVolume, Tags: list},
		{ResourceType: ec2types.ResourceTypeFleet, Tags: list},
	}
}
