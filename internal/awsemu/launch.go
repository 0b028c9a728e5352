package awsemu

import (
	"fmt"
)

// launchOneLocked starts one instance for an override, or says why it cannot.
func (e *Emulator) launchOneLocked(req FleetRequest, o FleetOverride) (id, zone string, ferr *FleetError) {
	lc := req.CapacityType
	subnet, ferr := e.overrideSubnetLocked(o, lc)
	if ferr != nil {
		return "", "", ferr
	}
	zone = subnet.Zone
	if _, ok := e.types[o.InstanceType]; !ok {
		return "", "", fleetErr(o, lc, CodeUnsupported, fmt.Sprintf("instance type %s is not supported", o.InstanceType))
	}
	lt := e.lts[o.LaunchTemplateID]
	if len(lt.NetworkInterfaces) > 0 && len(lt.SecurityGroups) > 0 {
		return "", "", fleetErr(o, lc, "InvalidParameterCombination", "Network interfaces and an instance-level security groups may not be specified on the same request")
	}
	cr, ferr := e.reservationForLocked(lc, zone, o, lt)
	if ferr != nil {
		return "", "", ferr
	}
	var pool *Pool
	if cr == nil {
		if pool, ferr = e.poolForLocked(o, zone, lc); ferr != nil {
			return "", "", ferr
		}
	}
	if subnet.AvailableIPs <= 0 {
		return "", "", fleetErr(o, lc, CodeInsufficientAddress, "There are not enough free addresses in subnet '"+subnet.ID+"' to satisfy the requested number of instances.")
	}
	image, ferr := e.overrideImageLocked(o, lt, lc)
	if ferr != nil {
		return "", "", ferr
	}
	if cr != nil {
		cr.AvailableInstanceCount--
	} else {
		pool.Capacity--
	}
	subnet.AvailableIPs--
	in := e.newInstanceLocked(req, o, lt, subnet, image)
	if cr != nil {
		in.ReservationID = cr.ID
	}
	return in.ID, zone, nil
}

// overrideImageLocked is the image an override launches: its own, else its template's.
func (e *Emulator) overrideImageLocked(o FleetOverride, lt *LaunchTemplate, lc string) (string, *FleetError) {
	image := lt.ImageID
	if o.ImageID != "" {
		image = o.ImageID
	}
	if _, ok := e.network.images[image]; !ok {
		return "", fleetErr(o, lc, "InvalidAMIID.NotFound", "The image id '["+image+"]' does not exist")
	}
	return image, nil
}

// poolForLocked returns the pool a launch outside any reservation draws from,
// or why it cannot: not offered, over the account's vCPU quota, or short.
func (e *Emulator) poolForLocked(o FleetOverride, zone, lc string) (*Pool, *FleetError) {
	pool, ok := e.pools[PoolKey{o.InstanceType, zone, lc}]
	if !ok {
		return nil, fleetErr(o, lc, CodeUnsupported, fmt.Sprintf("%s is not offered in %s", o.InstanceType, zone))
	}
	if ferr := e.quotaErrLocked(o, lc); ferr != nil {
		return nil, ferr
	}
	if pool.Short || pool.Capacity <= 0 {
		return nil, fleetErr(o, lc, CodeInsufficientCapacity,
			fmt.Sprintf("We currently do not have sufficient %s capacity in the Availability Zone you requested (%s).", o.InstanceType, zone))
	}
	return pool, nil
}

func (e *Emulator) overrideSubnetLocked(o FleetOverride, lc string) (*Subnet, *FleetError) {
	if o.SubnetID != "" {
		s, ok := e.network.subnets[o.SubnetID]
		if !ok {
			return nil, fleetErr(o, lc, CodeInvalidSubnet, "The subnet ID '"+o.SubnetID+"' does not exist")
		}
		return s, nil
	}
	var found *Subnet
	for _, s := range e.network.subnets {
		if s.Zone == o.Zone && (found == nil || s.ID < found.ID) {
			found = s
		}
	}
	if found == nil {
		return nil, fleetErr(o, lc, CodeInvalidSubnet, "no subnet in zone "+o.Zone)
	}
	return found, nil
}

func (e *Emulator) newInstanceLocked(req FleetRequest, o FleetOverride, lt *LaunchTemplate, s *Subnet, image string) *Instance {
	now := e.clk.Now()
	tags := cloneTags(lt.InstanceTags)
	for k, v := range req.InstanceTags {
		tags[k] = v
	}
	in := &Instance{
		ID: e.newID("i"), InstanceType: o.InstanceType, Zone: s.Zone, SubnetID: s.ID, VpcID: s.VpcID,
		CapacityType: req.CapacityType, ImageID: image, LaunchTemplate: lt.ID,
		SecurityGroups: append([]string(nil), e.launchGroupsLocked(lt, s)...), ProfileARN: lt.ProfileARN,
		UserData: lt.UserData, HTTPTokens: lt.HTTPTokens, HopLimit: lt.HopLimit, Tags: tags,
		ClientToken: req.ClientToken, PrivateIP: fmt.Sprintf("10.0.%d.%d", len(e.order)/250%250, len(e.order)%250+4),
		State: StatePending, LaunchTime: now, StateSince: now,
	}
	if req.CapacityType == CapacitySpot { // from the instance's id: the seeded ids stay as they were
		in.SpotRequestID = "sir-" + in.ID[len(in.ID)-8:]
	}
	e.instances[in.ID] = in
	e.order = append(e.order, in.ID)
	e.wakeLocked(in)
	if e.cfg.PendingDelay == 0 {
		e.setStateLocked(in, StateRunning, now)
	}
	return in
}
