package scheduler

import (
	"math"
	"slices"

	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// Reserved first: a capacity reservation (an On-Demand Capacity Reservation
// or a Capacity Block) is paid for whatever runs in it, so its offerings
// cost 0 and the solver fills them before any other where a pool allows
// them. It counts what is left in each: a claim whose cheapest offering is
// a reservation holds one of its places, and once a reservation is full its
// offerings are unavailable to the claims that follow, which the pools'
// types are repriced for.
type reservations struct {
	left  map[string]int   // reservation id -> places not held yet
	holds map[*node]string // claim -> the reservation it holds a place in
}

// reservationsOf builds the solve's count on first use: each reservation's
// room as the snapshot's offerings give it.
func (sv *solver) reservationsOf() *reservations {
	if sv.reserved != nil {
		return sv.reserved
	}
	sv.reserved = &reservations{left: map[string]int{}, holds: map[*node]string{}}
	for _, types := range sv.snapshot.InstanceTypes {
		for _, it := range types {
			for _, o := range it.Offerings {
				if o.ReservationID != "" && o.Available {
					sv.reserved.left[o.ReservationID] = max(sv.reserved.left[o.ReservationID], o.ReservationCapacity)
				}
			}
		}
	}
	return sv.reserved
}

// holdReservation makes the claim hold a place in the reservation its
// current type's cheapest offering is in, releasing the one it held, and
// exhausts a reservation whose last place it takes.
func (sv *solver) holdReservation(n *node) {
	rs := sv.reservationsOf()
	if len(rs.left) == 0 {
		return
	}
	want := ""
	if o, ok := n.types[n.cur].it.Offerings.Available().Compatible(n.reqs).Cheapest(); ok {
		want = o.ReservationID
	}
	held := rs.holds[n]
	if want == held {
		return
	}
	if held != "" {
		rs.left[held]++
		delete(rs.holds, n)
	}
	if want == "" || rs.left[want] <= 0 {
		return // finish gives the claim another offering (claimOffering)
	}
	rs.left[want]--
	rs.holds[n] = want
	if rs.left[want] == 0 {
		sv.exhaust(want)
	}
}

// exhaust reprices every pool's types without the reservation's offerings.
// The pools get new lists; the claims keep theirs, so a claim holding a
// place keeps its offering.
func (sv *solver) exhaust(id string) {
	for _, p := range sv.pools {
		if !slices.ContainsFunc(p.types, func(t *typeOption) bool { return hasReservation(t.it, id) }) {
			continue
		}
		types := make([]*typeOption, 0, len(p.types))
		for _, t := range p.types {
			if !hasReservation(t.it, id) {
				types = append(types, t)
				continue
			}
			it := withoutReservation(t.it, id)
			if price := it.CheapestPrice(p.reqs); !math.IsInf(price, 1) {
				types = append(types, &typeOption{it: it, alloc: t.alloc, daemonSet: t.daemonSet, price: price})
			}
		}
		sortTypeOptions(types)
		p.types, p.offeredValues = types, nil
	}
}

func hasReservation(it *cloudprovider.InstanceType, id string) bool {
	return slices.ContainsFunc(it.Offerings, func(o cloudprovider.Offering) bool { return o.ReservationID == id && o.Available })
}

// withoutReservation is a copy of the type whose offerings in the
// reservation are unavailable.
func withoutReservation(it *cloudprovider.InstanceType, id string) *cloudprovider.InstanceType {
	cp := *it
	cp.Offerings = slices.Clone(it.Offerings)
	for i, o := range cp.Offerings {
		if o.ReservationID == id {
			cp.Offerings[i].Available = false
		}
	}
	return &cp
}

// claimOffering is the offering a claim of type t launches on as the
// decision sees it: the cheapest its requirements allow, but not a place in
// a reservation the claim does not hold once the reservation is full.
func (sv *solver) claimOffering(n *node, t *typeOption, reqs scheduling.Requirements) cloudprovider.Offering {
	ofs := t.it.Offerings.Available().Compatible(reqs)
	if rs := sv.reserved; rs != nil {
		ofs = slices.DeleteFunc(ofs, func(o cloudprovider.Offering) bool {
			return o.ReservationID != "" && rs.holds[n] != o.ReservationID && rs.left[o.ReservationID] <= 0
		})
	}
	o, _ := ofs.Cheapest()
	return o
}
