package awsemu

import (
	"fmt"
	"time"
)

// Capacity Blocks for ML, as the EC2 User Guide documents them ("Capacity
// Blocks for ML", "View Capacity Blocks", "Launch instances using Capacity
// Blocks", "Monitor Capacity Blocks using EventBridge", and the EC2 Fleet
// tutorial "Launch instances into Capacity Blocks"):
//   - a block is a Capacity Reservation of reservationType capacity-block:
//     a fixed instance type, zone and count between a start and an end date,
//     always targeted (instanceMatchCriteria targeted);
//   - it is scheduled (available count 0) before its start, active from its
//     start, expired from its end;
//   - instances launch into it only with a launch template whose
//     InstanceMarketOptions.MarketType is capacity-block and that targets it,
//     from an instant fleet whose DefaultTargetCapacityType is capacity-block;
//     a launch before the start, or beyond its count, gets
//     InsufficientInstanceCapacity, and a block fleet never falls back to
//     On-Demand;
//   - EC2 sends "Capacity Block Reservation Delivered" at the start and
//     "Capacity Block Reservation Expiration Warning" 40 minutes before the
//     end, and starts terminating the block's instances 10 minutes later,
//     30 minutes before the end.
//
// What the guide leaves open, and the emulator decides: a launch in the
// last 30 minutes (whose instance EC2 would terminate at once) is refused as
// one before the start is.

// Reservation types, as EC2 names them.
const (
	ReservationTypeDefault       = "default"
	ReservationTypeCapacityBlock = "capacity-block"

	// ReservationScheduled is the state of a block before its start.
	ReservationScheduled = "scheduled"
	// CapacityBlock is the market type (and fleet DefaultTargetCapacityType,
	// and instance lifecycle) of a launch into a block.
	CapacityBlock = "capacity-block"

	// BlockWarningLead is how long before its end a block's expiration
	// warning comes; BlockTerminationLead is when EC2 starts terminating
	// its instances.
	BlockWarningLead     = 40 * time.Minute
	BlockTerminationLead = 30 * time.Minute
)

// Detail types of the events EC2 sends about a block.
const (
	DetailTypeBlockDelivered         = "Capacity Block Reservation Delivered"
	DetailTypeBlockExpirationWarning = "Capacity Block Reservation Expiration Warning"
)

// blockState is what the emulator has done about one block: the events sent,
// the instances taken back.
type blockState struct {
	delivered, warned, reclaimed bool
}

// AddCapacityBlock adds a Capacity Block of count instances of one type in
// one zone from start to end, and returns its id. It panics on a block that
// ends before it starts: a test's mistake.
func (e *Emulator) AddCapacityBlock(instanceType, zone string, count int, start, end time.Time, tags map[string]string) string {
	if !end.After(start) || count <= 0 {
		panic(fmt.Sprintf("capacity block of %d %s from %s to %s", count, instanceType, start, end))
	}
	return e.AddCapacityReservation(CapacityReservation{ReservationType: ReservationTypeCapacityBlock, InstanceType: instanceType,
		Zone: zone, TotalInstanceCount: count, InstanceMatchCriteria: MatchTargeted, EndDateType: EndLimited,
		StartDate: start, EndDate: end, Tags: tags})
}

func (r *CapacityReservation) isBlock() bool {
	return r.ReservationType == ReservationTypeCapacityBlock
}

// availableLocked is the count EC2 reports: 0 for a block not started yet.
func (e *Emulator) availableLocked(r *CapacityReservation) int {
	if e.reservationStateLocked(r) == ReservationScheduled {
		return 0
	}
	return r.AvailableInstanceCount
}

// blockLaunchableLocked reports whether a block takes launches now: active,
// and not yet in the 30 minutes in which EC2 takes its instances back.
func (e *Emulator) blockLaunchableLocked(r *CapacityReservation) bool {
	now := e.clk.Now()
	return e.reservationStateLocked(r) == ReservationActive && now.Before(r.EndDate.Add(-BlockTerminationLead))
}

// blockForLocked checks a capacity-block launch of an override: its template
// must target a block of the override's type and zone that takes launches
// now and has room.
func (e *Emulator) blockForLocked(zone string, o FleetOverride, lt *LaunchTemplate) (*CapacityReservation, *FleetError) {
	r, ok := e.reservations[lt.ReservationTarget]
	switch {
	case lt.MarketType != CapacityBlock:
		return nil, fleetErr(o, CapacityBlock, "InvalidParameterCombination",
			"A capacity-block fleet needs launch templates whose InstanceMarketOptions MarketType is capacity-block.")
	case !ok || !r.isBlock():
		return nil, fleetErr(o, CapacityBlock, "InvalidParameterCombination", fmt.Sprintf(
			"The launch template must target a Capacity Block reservation; %q is not one.", lt.ReservationTarget))
	case r.InstanceType != o.InstanceType || r.Zone != zone:
		return nil, fleetErr(o, CapacityBlock, "InvalidParameterCombination", fmt.Sprintf(
			"The instance type %s in %s does not match Capacity Block %s (%s in %s).", o.InstanceType, zone, r.ID, r.InstanceType, r.Zone))
	case !e.blockLaunchableLocked(r) || r.AvailableInstanceCount <= 0:
		return nil, fleetErr(o, CapacityBlock, CodeInsufficientCapacity, fmt.Sprintf(
			"There is not enough capacity in Capacity Block %s for the requested instances.", r.ID))
	}
	return r, nil
}

// advanceBlocksLocked sends each block's events and takes its instances back
// when their time has come on the clock, each once, dated when it was due.
func (e *Emulator) advanceBlocksLocked(now time.Time) {
	for _, r := range e.sortedReservationsLocked() {
		if !r.isBlock() {
			continue
		}
		st := e.blocks[r.ID]
		if st == nil {
			st = &blockState{}
			e.blocks[r.ID] = st
		}
		warnAt, reclaimAt := r.EndDate.Add(-BlockWarningLead), r.EndDate.Add(-BlockTerminationLead)
		if !st.delivered && !now.Before(r.StartDate) && now.Before(r.EndDate) {
			st.delivered = true
			e.publishLocked(e.blockEvent(r, DetailTypeBlockDelivered, "delivered", r.StartDate))
		}
		if !st.warned && !now.Before(warnAt) && now.Before(r.EndDate) {
			st.warned = true
			e.publishLocked(e.blockEvent(r, DetailTypeBlockExpirationWarning, "approaching-expiry", warnAt))
		}
		if !st.reclaimed && !now.Before(reclaimAt) {
			st.reclaimed = true
			e.reclaimBlockLocked(r, reclaimAt)
		}
	}
}

// reclaimBlockLocked starts shutting down the block's live instances at at.
func (e *Emulator) reclaimBlockLocked(r *CapacityReservation, at time.Time) {
	for _, id := range e.order {
		in := e.instances[id]
		if in.ReservationID == r.ID && (in.State == StatePending || in.State == StateRunning) &&
			(in.InterruptAt.IsZero() || in.InterruptAt.After(at)) {
			in.InterruptAt = at
			e.wakeLocked(in)
		}
	}
}

// blockEvent is one of EC2's block events: the reservation's ARN in
// resources, its id and end date in the detail.
func (e *Emulator) blockEvent(r *CapacityReservation, detailType, suffix string, at time.Time) Event {
	arn := "arn:aws:ec2:" + e.cfg.Region + ":" + orDefault(r.OwnerID, e.cfg.AccountID) + ":capacity-reservation/" + r.ID
	return envelope(e.cfg, r.ID+"-"+suffix, sourceEC2, detailType, at, []string{arn},
		map[string]string{"capacity-reservation-id": r.ID, "end-date": r.EndDate.UTC().Format(time.RFC3339)})
}

// NextBlockEvent is the next instant after now at which a block's event or
// reclamation falls due, zero when none will: a simulator wakes then.
func (e *Emulator) NextBlockEvent() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clk.Now()
	var next time.Time
	for _, r := range e.reservations {
		if !r.isBlock() {
			continue
		}
		for _, t := range []time.Time{r.StartDate, r.EndDate.Add(-BlockWarningLead), r.EndDate.Add(-BlockTerminationLead), r.EndDate} {
			if t.After(now) && (next.IsZero() || t.Before(next)) {
				next = t
			}
		}
	}
	return next
}
