package awsemu

import (
	"fmt"
	"sort"
	"time"
)

// Capacity reservation match criteria, states and end date types, as EC2 names them.
const (
	MatchOpen     = "open"
	MatchTargeted = "targeted"

	ReservationActive    = "active"
	ReservationExpired   = "expired"
	ReservationCancelled = "cancelled"

	EndUnlimited = "unlimited"
	EndLimited   = "limited"

	// CodeReservationCapacityExceeded is what a launch into a full reservation fails with.
	CodeReservationCapacityExceeded = "ReservationCapacityExceeded"
)

// CapacityReservation is an On-Demand Capacity Reservation: room for
// TotalInstanceCount instances of one type in one zone. Instances that target
// it use it; when its match criteria are open, any matching on-demand launch
// whose launch template does not opt out uses it too. An instance in a
// reservation takes nothing from the on-demand pool and gives its place back to
// the reservation when it stops.
type CapacityReservation struct {
	ID                 string
	InstanceType       string
	Zone               string
	InstancePlatform   string // Linux/UNIX when empty
	Tenancy            string // default when empty
	TotalInstanceCount int
	// AvailableInstanceCount is how many more instances fit; TotalInstanceCount when
	// zero at creation.
	AvailableInstanceCount int
	InstanceMatchCriteria  string // MatchOpen (default) or MatchTargeted
	// State is ReservationActive when empty; a limited reservation reports
	// ReservationExpired from its EndDate on.
	State       string
	EndDateType string // EndUnlimited (default) or EndLimited
	EndDate     time.Time
	StartDate   time.Time
	CreateDate  time.Time
	Tags        map[string]string
	// OwnerID is the account that owns the reservation: the emulator's own
	// when empty, another for a reservation shared with it.
	OwnerID string
	// ReservationType is ReservationTypeDefault (when empty) or
	// ReservationTypeCapacityBlock (blocks.go; AddCapacityBlock).
	ReservationType string
}

// AddCapacityReservation adds a reservation, filling defaults, and returns its id.
func (e *Emulator) AddCapacityReservation(r CapacityReservation) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r.ID == "" {
		r.ID = e.newID("cr")
	}
	now := e.clk.Now()
	r.InstancePlatform = orDefault(r.InstancePlatform, "Linux/UNIX")
	r.Tenancy = orDefault(r.Tenancy, "default")
	r.InstanceMatchCriteria = orDefault(r.InstanceMatchCriteria, MatchOpen)
	r.State = orDefault(r.State, ReservationActive)
	r.EndDateType = orDefault(r.EndDateType, EndUnlimited)
	r.ReservationType = orDefault(r.ReservationType, ReservationTypeDefault)
	if r.AvailableInstanceCount == 0 {
		r.AvailableInstanceCount = r.TotalInstanceCount
	}
	if r.StartDate.IsZero() {
		r.StartDate = now
	}
	if r.CreateDate.IsZero() {
		r.CreateDate = now
	}
	r.Tags = cloneTags(r.Tags)
	e.reservations[r.ID] = &r
	return r.ID
}

// CapacityReservation returns a copy of a reservation, with its state at the
// emulator's clock, and whether it exists.
func (e *Emulator) CapacityReservation(id string) (CapacityReservation, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advanceLocked()
	r, ok := e.reservations[id]
	if !ok {
		return CapacityReservation{}, false
	}
	cp := *r
	cp.State = e.reservationStateLocked(r)
	cp.Tags = cloneTags(r.Tags)
	return cp, true
}

// SetReservationAvailable sets how many more instances a reservation can take,
// as when instances outside the emulated cluster use it.
func (e *Emulator) SetReservationAvailable(id string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r, ok := e.reservations[id]; ok {
		r.AvailableInstanceCount = n
	}
}

func (e *Emulator) reservationStateLocked(r *CapacityReservation) string {
	if r.State == ReservationActive && r.EndDateType == EndLimited && !e.clk.Now().Before(r.EndDate) {
		return ReservationExpired
	}
	if r.State == ReservationActive && r.isBlock() && e.clk.Now().Before(r.StartDate) {
		return ReservationScheduled
	}
	return r.State
}

// sortedReservationsLocked lists reservations by id.
func (e *Emulator) sortedReservationsLocked() []*CapacityReservation {
	out := make([]*CapacityReservation, 0, len(e.reservations))
	for _, r := range e.reservations {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// reservationForLocked picks the reservation an on-demand launch of an
// override uses, after its launch template's CapacityReservationSpecification:
// the targeted reservation (which must be active, match the type and zone, and
// have room), or with preference open an open matching one with room, or none.
// It returns nil and no error when the launch uses the on-demand pool.
func (e *Emulator) reservationForLocked(lc, zone string, o FleetOverride, lt *LaunchTemplate) (*CapacityReservation, *FleetError) {
	if lc == CapacityBlock {
		return e.blockForLocked(zone, o, lt)
	}
	if lt.MarketType == CapacityBlock {
		return nil, fleetErr(o, lc, "InvalidParameterCombination",
			"A launch template whose MarketType is capacity-block launches only from a capacity-block fleet.")
	}
	if lc != CapacityOnDemand {
		if lt.ReservationTarget != "" {
			return nil, fleetErr(o, lc, "InvalidParameterCombination", "Spot Instances cannot launch into a Capacity Reservation.")
		}
		return nil, nil
	}
	if id := lt.ReservationTarget; id != "" {
		r, ok := e.reservations[id]
		switch {
		case !ok:
			return nil, fleetErr(o, lc, "InvalidCapacityReservationId.NotFound", fmt.Sprintf("The Capacity Reservation ID '%s' does not exist.", id))
		case r.isBlock():
			return nil, fleetErr(o, lc, "InvalidParameterCombination", fmt.Sprintf(
				"Capacity Block %s takes only launches whose market type is capacity-block.", id))
		case r.InstanceType != o.InstanceType || r.Zone != zone:
			return nil, fleetErr(o, lc, "InvalidParameterCombination", fmt.Sprintf(
				"The instance type %s in %s does not match Capacity Reservation %s (%s in %s).", o.InstanceType, zone, id, r.InstanceType, r.Zone))
		case e.reservationStateLocked(r) != ReservationActive || r.AvailableInstanceCount <= 0:
			return nil, fleetErr(o, lc, CodeReservationCapacityExceeded, fmt.Sprintf(
				"The requested Capacity Reservation %s does not have sufficient available capacity for this request.", id))
		}
		return r, nil
	}
	if lt.ReservationPreference == "none" {
		return nil, nil
	}
	for _, r := range e.sortedReservationsLocked() {
		if r.InstanceMatchCriteria == MatchOpen && r.InstanceType == o.InstanceType && r.Zone == zone &&
			e.reservationStateLocked(r) == ReservationActive && r.AvailableInstanceCount > 0 {
			return r, nil
		}
	}
	if lt.ReservationPreference == "capacity-reservations-only" {
		return nil, fleetErr(o, lc, CodeReservationCapacityExceeded, "There is no open Capacity Reservation with available capacity for "+o.InstanceType+" in "+zone+".")
	}
	return nil, nil
}

// usesReservationLocked reports whether an on-demand override would launch into
// a reservation with room, for the use-capacity-reservations-first strategy.
func (e *Emulator) usesReservationLocked(o FleetOverride) bool {
	lt, ok := e.lts[o.LaunchTemplateID]
	if !ok {
		return false
	}
	r, ferr := e.reservationForLocked(CapacityOnDemand, e.overrideZoneLocked(o), o, lt)
	return r != nil && ferr == nil
}
