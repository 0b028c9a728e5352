package simulate

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowaws "github.com/stowage-dev/stowage/controller/aws"
	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/simulate/report"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

// CapacityReservation is a reservation the scenario's account holds: an
// On-Demand Capacity Reservation (type default) active from the start, or a
// Capacity Block for ML (type capacity-block) between Start and End. The
// emulator models it as EC2 documents it (internal/awsemu/blocks.go), and
// NodeClasses select it by its tags as they would a real one.
type CapacityReservation struct {
	// Type is default (an On-Demand Capacity Reservation, when empty) or capacity-block.
	Type         string `json:"type,omitempty"`
	InstanceType string `json:"instanceType"`
	Zone         string `json:"zone"`
	// Count is how many instances it holds.
	Count int `json:"count"`
	// Start and End bound its window from the run's start: a block needs
	// both; a default reservation starts at 0s and never ends when End is zero.
	Start metav1.Duration `json:"start,omitempty"`
	End   metav1.Duration `json:"end,omitempty"`
	// InstanceMatchCriteria is open (when empty) or targeted; a block is always targeted.
	InstanceMatchCriteria string `json:"instanceMatchCriteria,omitempty"`
	// Tags are what NodeClasses' capacityReservationSelectorTerms select it by.
	Tags map[string]string `json:"tags,omitempty"`
	// PricePerHour is what one instance of it costs an hour, whether used or
	// not; the offering's on-demand price when zero.
	PricePerHour float64 `json:"pricePerHour,omitempty"`
}

func (r *CapacityReservation) isBlock() bool {
	return r.Type == v1alpha1.CapacityReservationTypeCapacityBlock
}

// validateReservation checks one reservation; every message names the fix.
func (s *Scenario) validateReservation(f string, r *CapacityReservation, bad func(string, string, ...any)) {
	switch r.Type {
	case "", v1alpha1.CapacityReservationTypeDefault, v1alpha1.CapacityReservationTypeCapacityBlock:
	default:
		bad(f+".type", "%q: use default or capacity-block", r.Type)
	}
	if !slices.ContainsFunc(catalogue.Builtin(), func(i catalogue.Info) bool { return i.Name == r.InstanceType }) {
		bad(f+".instanceType", "%q is not an instance type of the simulated catalogue, e.g. g5.12xlarge", r.InstanceType)
	}
	if !slices.Contains(s.zones(), r.Zone) {
		bad(f+".zone", "%q is not one of the scenario's zones %v", r.Zone, s.zones())
	}
	if r.Count <= 0 {
		bad(f+".count", "must be positive: how many instances it holds")
	}
	if r.Start.Duration < 0 || r.End.Duration < 0 {
		bad(f, "start and end must not be negative")
	}
	if r.PricePerHour < 0 {
		bad(f+".pricePerHour", "must not be negative")
	}
	switch {
	case r.isBlock() && r.End.Duration <= r.Start.Duration:
		bad(f+".end", "a capacity block needs an end after its start, e.g. {start: 1h, end: 6h}")
	case r.isBlock() && r.InstanceMatchCriteria != "" && r.InstanceMatchCriteria != awsemu.MatchTargeted:
		bad(f+".instanceMatchCriteria", "a capacity block is always targeted: remove the field")
	case r.isBlock():
	case r.Start.Duration != 0:
		bad(f+".start", "a default reservation is active from the run's start (future-dated ones are not simulated): remove start, or use type capacity-block")
	case r.End.Duration != 0 && r.End.Duration <= r.Start.Duration:
		bad(f+".end", "must be after start, or zero for a reservation that does not end")
	}
	if c := r.InstanceMatchCriteria; c != "" && c != awsemu.MatchOpen && c != awsemu.MatchTargeted {
		bad(f+".instanceMatchCriteria", "%q: use open or targeted", c)
	}
}

// seedReservations adds the scenario's reservations to the emulator and
// returns each block's end by its id.
func seedReservations(s *Scenario, emu *awsemu.Emulator) (blockEnds map[string]time.Time) {
	blockEnds = map[string]time.Time{}
	for _, r := range s.Spec.CapacityReservations {
		start, end := epoch.Add(r.Start.Duration), epoch.Add(r.End.Duration)
		if r.isBlock() {
			blockEnds[emu.AddCapacityBlock(r.InstanceType, r.Zone, r.Count, start, end, r.Tags)] = end
			continue
		}
		cr := awsemu.CapacityReservation{InstanceType: r.InstanceType, Zone: r.Zone, TotalInstanceCount: r.Count,
			InstanceMatchCriteria: r.InstanceMatchCriteria, StartDate: start, Tags: maps.Clone(r.Tags)}
		if r.End.Duration > 0 {
			cr.EndDateType, cr.EndDate = awsemu.EndLimited, end
		}
		emu.AddCapacityReservation(cr)
	}
	return blockEnds
}

// reservationPrice is what one instance of a reservation costs an hour.
func (w *world) reservationPrice(r *CapacityReservation) float64 {
	if r.PricePerHour > 0 {
		return r.PricePerHour
	}
	return w.price(offer(r.InstanceType, r.Zone, v1alpha1.CapacityTypeOnDemand))
}

// reservationWindow is when a reservation is paid for: a block's whole
// window (paid up front, whether the run reaches its end or not), a default
// reservation's from its start to its end or the run's.
func (w *world) reservationWindow(r *CapacityReservation) (from, until time.Duration) {
	if r.isBlock() || (r.End.Duration > 0 && r.End.Duration < w.s.Spec.Duration.Duration) {
		return r.Start.Duration, r.End.Duration
	}
	return r.Start.Duration, w.s.Spec.Duration.Duration
}

// reservationsCost is what the scenario's reservations cost in all: their
// instances are paid for through them (simInstance.price is 0), used or not.
func (w *world) reservationsCost() float64 {
	total := 0.0
	for i := range w.s.Spec.CapacityReservations {
		r := &w.s.Spec.CapacityReservations[i]
		from, until := w.reservationWindow(r)
		total += w.reservationPrice(r) * float64(r.Count) * (until - from).Hours()
	}
	return total
}

// reservationsPerHour is the hourly cost of the reservations in their window at t.
func (w *world) reservationsPerHour(t time.Duration) float64 {
	total := 0.0
	for i := range w.s.Spec.CapacityReservations {
		r := &w.s.Spec.CapacityReservations[i]
		if from, until := w.reservationWindow(r); t >= from && t < until {
			total += w.reservationPrice(r) * float64(r.Count)
		}
	}
	return total
}

// reclaimBlocks hands the cloud controller manager the instances EC2 takes
// back at a block's end (internal/awsemu/blocks.go): from 30 minutes before
// the end the emulator shuts them down, and the world reaps them as it does
// an interrupted instance. Stowage's nodes should have left the block by then.
func (w *world) reclaimBlocks() {
	now := w.clk.Now()
	if !slices.ContainsFunc(slices.Collect(maps.Values(w.blockEnds)), func(end time.Time) bool {
		return !now.Before(end.Add(-awsemu.BlockTerminationLead))
	}) {
		return
	}
	for _, in := range w.sortedInstances() {
		id := in.id
		if in.reservation == "" || w.terminating[id] {
			continue
		}
		end, isBlock := w.blockEnds[in.reservation]
		if !isBlock || now.Before(end.Add(-awsemu.BlockTerminationLead)) {
			continue
		}
		if cur, ok := w.emu.Instance(id); !ok || cur.State == awsemu.StateShuttingDown || cur.State == awsemu.StateTerminated {
			// An interruption in the report: the pods still on it are lost.
			w.terminating[id] = true
			w.out.interruptions = append(w.out.interruptions, report.Interruption{Notice: now,
				Instance: report.Instance{Name: id, Offering: offer(in.instanceType, in.zone, in.capacityType)}})
			w.out.openInterruptions = append(w.out.openInterruptions, len(w.out.interruptions)-1)
		}
	}
}

// catalogueRefresh drives the cloud provider's catalogue refresh as its
// refresh loop runs it in stowage run (controller/aws/loops.go): every
// DefaultRefreshInterval, and at the start of a reservation the catalogue
// knows, so that a Capacity Block has room from its start.
type catalogueRefresh struct {
	aws *stowaws.CloudProvider
	clk clock.Clock
	// next is the next scheduled refresh.
	next time.Time
}

// due is when the next refresh runs; false for none (a nil refresh).
func (r *catalogueRefresh) due() (time.Time, bool) {
	if r == nil {
		return time.Time{}, false
	}
	at := r.next
	if s := r.aws.NextReservationStart(r.clk.Now()); !s.IsZero() && s.Before(at) {
		at = s
	}
	return at, true
}

// refresh refreshes the catalogue when it is due at now.
func (r *catalogueRefresh) refresh(ctx context.Context, now time.Time) error {
	at, ok := r.due()
	if !ok || now.Before(at) {
		return nil
	}
	if !now.Before(r.next) {
		r.next = r.next.Add(stowaws.DefaultRefreshInterval)
	}
	if err := r.aws.Refresh(ctx); err != nil {
		return fmt.Errorf("refreshing the catalogue: %w", err)
	}
	return nil
}
