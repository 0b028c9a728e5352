package cloudprovider

import (
	"cmp"
	"math"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// InstanceType is one machine shape as the scheduler sees it: its labels as
// requirements, where and how it can be bought (offerings), its capacity and the
// part of that capacity the node keeps for itself.
type InstanceType struct {
	Name string
	// Requirements hold every label a node of this type carries, zone and capacity
	// type as the set its offerings span.
	Requirements scheduling.Requirements
	Offerings    Offerings
	Capacity     scheduling.Resources
	Overhead     Overhead
	allocatable  *scheduling.Resources
}

// Overhead is what a node reserves for itself out of capacity.
type Overhead struct {
	KubeReserved      scheduling.Resources
	SystemReserved    scheduling.Resources
	EvictionThreshold scheduling.Resources
}

// Total is the sum of every reservation.
func (o Overhead) Total() scheduling.Resources {
	return o.KubeReserved.Add(o.SystemReserved).Add(o.EvictionThreshold)
}

// Allocatable is capacity minus overhead: what pods may request on the node.
func (it *InstanceType) Allocatable() scheduling.Resources {
	if it.allocatable == nil {
		a := it.Capacity.Sub(it.Overhead.Total())
		it.allocatable = &a
	}
	return *it.allocatable
}

// Offering is one way to buy an instance type: a zone and capacity type at a price.
type Offering struct {
	Zone         string
	CapacityType string
	// Price is in US dollars per hour.
	Price float64
	// Available is false while the cloud reports no capacity for this offering.
	Available bool
	// UnavailableReason, when set, says why the cloud does not launch into the
	// offering (a zonal shift away from its zone), for the reasons pods pend.
	UnavailableReason string
	// ReservationID names the capacity reservation of a reserved offering.
	ReservationID string
	// ReservationCapacity is how many instances the reservation still has room for.
	ReservationCapacity int
	// RecentShortages counts the spells of shortage the cloud reported for
	// this offering within the last hour: reports between two successful
	// launches are one spell. Disruption does not move pods back onto an
	// offering that went short twice or more.
	RecentShortages int
	// ReservationType is the reservation's: default, or capacity-block for
	// a Capacity Block for ML.
	ReservationType string
	// ReservationStart and ReservationEnd bound a reservation that ends (a
	// Capacity Block); zero for one that does not. The solver uses a block
	// only from its start to its end less the pool's capacityBlockLeadTime.
	ReservationStart, ReservationEnd time.Time
}

// Requirements are the zone and capacity type of the offering as requirements.
func (o Offering) Requirements() scheduling.Requirements {
	return scheduling.NewRequirements(
		scheduling.NewRequirement(corev1.LabelTopologyZone, v1alpha1.OperatorIn, o.Zone),
		scheduling.NewRequirement(v1alpha1.LabelCapacityType, v1alpha1.OperatorIn, o.CapacityType),
	)
}

// Offerings is a list of offerings.
type Offerings []Offering

// Available keeps the offerings with capacity.
func (ofs Offerings) Available() Offerings {
	return slices.DeleteFunc(slices.Clone(ofs), func(o Offering) bool { return !o.Available })
}

// Compatible keeps the offerings whose zone and capacity type the requirements allow.
func (ofs Offerings) Compatible(reqs scheduling.Requirements) Offerings {
	zone, ct := reqs.Get(corev1.LabelTopologyZone), reqs.Get(v1alpha1.LabelCapacityType)
	return slices.DeleteFunc(slices.Clone(ofs), func(o Offering) bool { return !zone.Has(o.Zone) || !ct.Has(o.CapacityType) })
}

// Cheapest returns the lowest-priced offering, preferring reserved, then spot, then
// on-demand at equal prices, then zone name; ok is false when there is none.
func (ofs Offerings) Cheapest() (Offering, bool) {
	if len(ofs) == 0 {
		return Offering{}, false
	}
	return slices.MinFunc(ofs, CompareOfferings), true
}

// CompareOfferings orders offerings by price, then capacity type preference, then zone.
func CompareOfferings(a, b Offering) int {
	return cmp.Or(
		cmp.Compare(a.Price, b.Price),
		cmp.Compare(capacityTypeRank(a.CapacityType), capacityTypeRank(b.CapacityType)),
		cmp.Compare(a.Zone, b.Zone),
	)
}

func capacityTypeRank(ct string) int {
	if i := slices.Index(v1alpha1.CapacityTypes, ct); i >= 0 {
		return i
	}
	return len(v1alpha1.CapacityTypes)
}

// CheapestPrice is the price of the cheapest available offering the requirements
// allow, or +Inf when there is none.
func (it *InstanceType) CheapestPrice(reqs scheduling.Requirements) float64 {
	zone, ct := reqs[corev1.LabelTopologyZone], reqs[v1alpha1.LabelCapacityType]
	best := math.Inf(1)
	for _, o := range it.Offerings {
		if o.Available && o.Price < best && (zone == nil || zone.Has(o.Zone)) && (ct == nil || ct.Has(o.CapacityType)) {
			best = o.Price
		}
	}
	return best
}
