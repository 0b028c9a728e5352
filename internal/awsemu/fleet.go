package awsemu

import (
	"fmt"
	"sort"
)

// Fleet error codes the capacity model reports per override.
const (
	CodeInsufficientCapacity = "InsufficientInstanceCapacity"
	CodeInsufficientAddress  = "InsufficientFreeAddressesInSubnet"
	CodeUnsupported          = "Unsupported"
	CodeInvalidSubnet        = "InvalidSubnetID.NotFound"
)

// FleetOverride is one (instance type, subnet) candidate of a fleet request.
type FleetOverride struct {
	LaunchTemplateID string
	Version          string
	InstanceType     string
	SubnetID         string
	Zone             string  // used when SubnetID is empty
	ImageID          string  // overrides the launch template's image
	Priority         float64 // lower first, for the prioritized strategies; 0 when unset
	HasPriority      bool
}

// FleetRequest is an instant CreateFleet call in model terms.
type FleetRequest struct {
	ClientToken          string
	CapacityType         string // DefaultTargetCapacityType: spot, on-demand or capacity-block
	TotalTargetCapacity  int
	SpotStrategy         string // AllocationStrategy of SpotOptions
	OnDemandStrategy     string // AllocationStrategy of OnDemandOptions
	Overrides            []FleetOverride
	InstanceTags         map[string]string
	FleetTags            map[string]string
	CapacityReservations bool // UsageStrategy use-capacity-reservations-first: overrides with a reservation go first
	// Denied are the overrides (by index) IAM denied a launch of (the
	// caller's ec2:RunInstances, or the spot role's creation): they fail as
	// errors of the fleet.
	Denied map[int]FleetDenial
}

// FleetError is one entry of CreateFleet's errorSet.
type FleetError struct {
	Override  FleetOverride
	Lifecycle string
	Code      string
	Message   string
}

// FleetInstances is one entry of CreateFleet's fleetInstanceSet.
type FleetInstances struct {
	Override    FleetOverride
	Lifecycle   string
	InstanceIDs []string
	Zone        string
}

// FleetResult is what an instant fleet returns: what launched and what failed.
type FleetResult struct {
	FleetID   string
	Instances []FleetInstances
	Errors    []FleetError
}

// APIError is an error EC2 returns for the whole call (as opposed to a fleet's errorSet).
type APIError struct {
	Code    string
	Message string
}

func (e *APIError) Error() string { return e.Code + ": " + e.Message }

type fleetRecord struct {
	fingerprint string
	result      FleetResult
}

// CreateFleet runs an instant fleet: it walks the overrides in the order the
// allocation strategy picks and launches up to TotalTargetCapacity instances.
// Capacity failures go into FleetResult.Errors, not the error; the error is an
// *APIError for a malformed request or a reused ClientToken with other
// parameters (IdempotentParameterMismatch). A repeated ClientToken returns the
// first result and launches nothing.
func (e *Emulator) CreateFleet(req FleetRequest) (FleetResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advanceLocked()
	fp := fmt.Sprintf("%+v", FleetRequest{CapacityType: req.CapacityType, TotalTargetCapacity: req.TotalTargetCapacity,
		SpotStrategy: req.SpotStrategy, OnDemandStrategy: req.OnDemandStrategy, Overrides: req.Overrides, InstanceTags: req.InstanceTags})
	if rec, ok := e.fleets[req.ClientToken]; ok && req.ClientToken != "" {
		if rec.fingerprint != fp {
			return FleetResult{}, &APIError{"IdempotentParameterMismatch", "the client token " + req.ClientToken + " was used with other parameters"}
		}
		return rec.result, nil
	}
	if err := e.validateFleetLocked(req); err != nil {
		return FleetResult{}, err
	}
	res := e.runFleetLocked(req)
	if req.ClientToken != "" {
		e.fleets[req.ClientToken] = &fleetRecord{fingerprint: fp, result: res}
	}
	return res, nil
}

func (e *Emulator) validateFleetLocked(req FleetRequest) error {
	if req.TotalTargetCapacity <= 0 {
		return &APIError{"InvalidParameterValue", "TotalTargetCapacity must be positive"}
	}
	if req.CapacityType != CapacitySpot && req.CapacityType != CapacityOnDemand && req.CapacityType != CapacityBlock {
		return &APIError{"InvalidParameterValue", "DefaultTargetCapacityType must be spot, on-demand or capacity-block"}
	}
	if len(req.Overrides) == 0 {
		return &APIError{"InvalidParameterValue", "at least one launch template config is required"}
	}
	for _, o := range req.Overrides {
		if _, ok := e.lts[o.LaunchTemplateID]; !ok {
			return &APIError{"InvalidLaunchTemplateId.NotFound", "launch template " + o.LaunchTemplateID + " does not exist"}
		}
	}
	return nil
}

func (e *Emulator) runFleetLocked(req FleetRequest) FleetResult {
	res := FleetResult{FleetID: "fleet-" + e.newID("x")[2:]}
	remaining, refused := e.fleetFaultLocked(req.TotalTargetCapacity)
	launched := map[int]*FleetInstances{}
	for tried, idx := range e.orderOverridesLocked(req) {
		o := req.Overrides[idx]
		if d, denied := req.Denied[idx]; denied && remaining > 0 {
			res.Errors = append(res.Errors, *fleetErr(o, req.CapacityType, d.Code, d.Message))
			continue
		}
		if req.CapacityType == CapacitySpot && remaining > 0 {
			e.iam.spotRole = true // the first spot launch creates the role
		}
		if remaining > 0 && refused(tried) {
			res.Errors = append(res.Errors, e.refusedLocked(o, req.CapacityType))
			continue
		}
		for remaining > 0 {
			id, zone, ferr := e.launchOneLocked(req, o)
			if ferr != nil {
				res.Errors = append(res.Errors, *ferr)
				break
			}
			if launched[idx] == nil {
				launched[idx] = &FleetInstances{Override: o, Lifecycle: req.CapacityType, Zone: zone}
			}
			launched[idx].InstanceIDs = append(launched[idx].InstanceIDs, id)
			remaining--
		}
	}
	keys := make([]int, 0, len(launched))
	for k := range launched {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	for _, k := range keys {
		res.Instances = append(res.Instances, *launched[k])
	}
	return res
}

// orderOverridesLocked returns override indexes in the order the strategy
// tries them (allocationOrder), from each override's pool: its price and
// its depth.
func (e *Emulator) orderOverridesLocked(req FleetRequest) []int {
	strategy := req.OnDemandStrategy
	if req.CapacityType == CapacitySpot {
		strategy = req.SpotStrategy
	}
	reservationsFirst := req.CapacityReservations && req.CapacityType == CapacityOnDemand
	cands := make([]candidate, len(req.Overrides))
	for i, o := range req.Overrides {
		c := candidate{price: 1e9, priority: o.Priority, reserved: reservationsFirst && e.usesReservationLocked(o)}
		if p, ok := e.pools[PoolKey{o.InstanceType, e.overrideZoneLocked(o), req.CapacityType}]; ok {
			c.price = p.Price
			if !p.Short {
				c.depth = p.Capacity
			}
		}
		cands[i] = c
	}
	return allocationOrder(strategy, cands)
}

func (e *Emulator) overrideZoneLocked(o FleetOverride) string {
	if s, ok := e.network.subnets[o.SubnetID]; ok {
		return s.Zone
	}
	return o.Zone
}

func fleetErr(o FleetOverride, lifecycle, code, msg string) *FleetError {
	return &FleetError{Override: o, Lifecycle: lifecycle, Code: code, Message: msg}
}
