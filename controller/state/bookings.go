package state

import (
	"slices"
	"strings"
	"sync"

	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// SetBooking records the virtual pods a booking keeps room for (a
// CapacityBuffer's chunks), replacing the owner's earlier ones; a booking
// without pods removes it. Snapshots do not carry bookings: the
// provisioner adds them to its decisions and disruption to its rounds
// (Bookings), and the simulations that move a node's pods leave them out.
func (c *Cluster) SetBooking(b scheduler.Booking) {
	c.write(func() {
		if c.bookings == nil {
			c.bookings = map[string]scheduler.Booking{}
		}
		if len(b.Pods) == 0 {
			delete(c.bookings, b.Owner.String())
			return
		}
		c.bookings[b.Owner.String()] = b
	})
}

// RemoveBooking forgets an owner's booking.
func (c *Cluster) RemoveBooking(owner scheduler.BookingOwner) {
	c.SetBooking(scheduler.Booking{Owner: owner})
}

// Bookings returns every booking, by owner.
func (c *Cluster) Bookings() []scheduler.Booking {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]scheduler.Booking, 0, len(c.bookings))
	for _, b := range c.bookings {
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b scheduler.Booking) int { return strings.Compare(a.Owner.String(), b.Owner.String()) })
	return out
}

// HasBookings reports whether any room is booked.
func (c *Cluster) HasBookings() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.bookings) > 0
}

// BookingResults remembers the provisioner's last word on each booking of
// one owner kind, for the controller that writes those owners' status.
type BookingResults struct {
	kind string
	mu   sync.Mutex
	seen map[string]scheduler.BookingResult
}

// NewBookingResults remembers the results of bookings of owner kind.
func NewBookingResults(kind string) *BookingResults {
	return &BookingResults{kind: kind, seen: map[string]scheduler.BookingResult{}}
}

// Record keeps the results of its kind and returns the owners whose result
// is new or changed.
func (b *BookingResults) Record(results []scheduler.BookingResult) []scheduler.BookingOwner {
	b.mu.Lock()
	defer b.mu.Unlock()
	var changed []scheduler.BookingOwner
	for _, r := range results {
		if r.Owner.Kind != b.kind {
			continue
		}
		if old, ok := b.seen[r.Owner.String()]; !ok || old != r {
			changed = append(changed, r.Owner)
		}
		b.seen[r.Owner.String()] = r
	}
	return changed
}

// Last is the last result recorded for owner, nil when none was.
func (b *BookingResults) Last(owner scheduler.BookingOwner) *scheduler.BookingResult {
	b.mu.Lock()
	defer b.mu.Unlock()
	if r, ok := b.seen[owner.String()]; ok {
		return &r
	}
	return nil
}
