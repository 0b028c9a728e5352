// Package capacityreservation keeps the capacity reservations that reserved
// offerings launch into, On-Demand Capacity Reservations and Capacity Blocks
// for ML alike: a NodeClass selects them with its
// capacityReservationSelectorTerms (Resolve; none without terms), and their
// free capacity is discovered with DescribeCapacityReservations, counted
// down locally as launches use them, and replaced on every refresh. A block
// (or a future-dated reservation) is known before it starts, with no room
// until then, and carries its start and end: the solver uses it only inside
// its window (a block's end less the pool's lead time).
package capacityreservation

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/awserrors"
	"github.com/stowage-dev/stowage/controller/aws/sdk"
	"github.com/stowage-dev/stowage/controller/aws/subnet"
)

// Reservation is one reservation Stowage may launch into, now or once it starts.
type Reservation struct {
	ID           string
	InstanceType string
	Zone         string
	// Type is v1alpha1.CapacityReservationTypeDefault or ...CapacityBlock.
	Type string
	// State is EC2's: active, or scheduled before its start.
	State string
	// Start and End bound a reservation that ends (every block); End is
	// zero for one that runs until cancelled.
	Start, End time.Time
	// Total is how many instances it holds.
	Total int
	// Available is how many more instances it takes, as far as Stowage knows.
	Available int
}

// IsBlock reports whether the reservation is a Capacity Block.
func (r Reservation) IsBlock() bool { return r.Type == v1alpha1.CapacityReservationTypeCapacityBlock }

// BlockTerminationLead is how long before a block's end EC2 starts
// terminating its instances: no launch goes into a block after that.
const BlockTerminationLead = 30 * time.Minute

// Launchable reports whether EC2 takes launches into the reservation at
// now: active as last refreshed (a block that started since is taken on the
// next refresh), and for a block not in the last 30 minutes, which EC2
// spends terminating its instances.
func (r Reservation) Launchable(now time.Time) bool {
	if r.State != string(ec2types.CapacityReservationStateActive) {
		return false
	}
	return !r.IsBlock() || now.Before(r.End.Add(-BlockTerminationLead))
}

// Provider serves the last discovered reservations. Reads never call AWS.
type Provider struct {
	ec2 sdk.EC2API

	mu        sync.RWMutex
	byType    map[string][]Reservation // instance type -> reservations, by id
	byID      map[string]Reservation   // reservation id -> reservation as refreshed
	available map[string]int           // reservation id -> instances it still takes
	version   atomic.Uint64
}

// NewProvider returns a provider with no reservations.
func NewProvider(ec2API sdk.EC2API) *Provider {
	return &Provider{ec2: ec2API, byType: map[string][]Reservation{}, byID: map[string]Reservation{}, available: map[string]int{}}
}

// usable are the filters of the reservations Stowage can launch into, now or
// once they start: active or scheduled, Linux/UNIX, default tenancy.
func usable() []ec2types.Filter {
	return []ec2types.Filter{
		{Name: aws.String("state"), Values: []string{string(ec2types.CapacityReservationStateActive), string(ec2types.CapacityReservationStateScheduled)}},
		{Name: aws.String("instance-platform"), Values: []string{string(ec2types.CapacityReservationInstancePlatformLinuxUnix)}},
		{Name: aws.String("tenancy"), Values: []string{string(ec2types.CapacityReservationTenancyDefault)}},
	}
}

// Refresh rediscovers the free capacity of every usable reservation the
// account can see (which ones a NodeClass launches into, Resolve says); on
// error the previous ones stay.
func (p *Provider) Refresh(ctx context.Context) error {
	in := &ec2.DescribeCapacityReservationsInput{Filters: usable()}
	byType, byID, available := map[string][]Reservation{}, map[string]Reservation{}, map[string]int{}
	pager := ec2.NewDescribeCapacityReservationsPaginator(p.ec2, in)
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("describing capacity reservations: %w", err)
		}
		for _, cr := range page.CapacityReservations {
			r := fromEC2(cr)
			byType[r.InstanceType] = append(byType[r.InstanceType], r)
			byID[r.ID], available[r.ID] = r, r.Available
		}
	}
	for _, rs := range byType {
		sort.Slice(rs, func(i, j int) bool { return rs[i].ID < rs[j].ID })
	}
	p.mu.Lock()
	p.byType, p.byID, p.available = byType, byID, available
	p.mu.Unlock()
	p.version.Add(1)
	recordAll(byID)
	return nil
}

func fromEC2(cr ec2types.CapacityReservation) Reservation {
	r := Reservation{ID: aws.ToString(cr.CapacityReservationId), InstanceType: aws.ToString(cr.InstanceType),
		Zone: aws.ToString(cr.AvailabilityZone), Type: string(cr.ReservationType), State: string(cr.State),
		Start: aws.ToTime(cr.StartDate), Total: int(aws.ToInt32(cr.TotalInstanceCount)),
		Available: int(aws.ToInt32(cr.AvailableInstanceCount))}
	if r.Type == "" {
		r.Type = v1alpha1.CapacityReservationTypeDefault
	}
	if cr.EndDateType == ec2types.EndDateTypeLimited {
		r.End = aws.ToTime(cr.EndDate)
	}
	return r
}

// Get returns a reservation as last refreshed, with its current free capacity.
func (p *Provider) Get(id string) (Reservation, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	r, ok := p.byID[id]
	r.Available = p.available[id]
	return r, ok
}

// ForType returns the reservations of an instance type with their current free capacity.
func (p *Provider) ForType(instanceType string) []Reservation {
	p.mu.RLock()
	defer p.mu.RUnlock()
	rs := p.byType[instanceType]
	if len(rs) == 0 {
		return nil
	}
	out := make([]Reservation, len(rs))
	for i, r := range rs {
		r.Available = p.available[r.ID]
		out[i] = r
	}
	return out
}

// Room returns how many more instances a reservation takes, as far as Stowage knows.
func (p *Provider) Room(id string) int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.available[id]
}

// Launched counts one instance into a reservation until the next refresh.
func (p *Provider) Launched(id string) { p.setAvailable(id, func(n int) int { return max(n-1, 0) }) }

// Exhausted records that EC2 found a reservation full, until the next refresh.
func (p *Provider) Exhausted(id string) { p.setAvailable(id, func(int) int { return 0 }) }

func (p *Provider) setAvailable(id string, f func(int) int) {
	p.mu.Lock()
	n, ok := p.available[id]
	if ok {
		n = f(n)
		p.available[id] = n
	}
	r := p.byID[id]
	p.mu.Unlock()
	if ok {
		p.version.Add(1)
		r.Available = n
		record(r)
	}
}

// NextStart is when to look again for a reservation known but not started
// yet (a Capacity Block): its start, or, for one EC2 still showed scheduled
// after it, startRecheck later, for startRechecks at most; zero when there
// is none. The refresh loop wakes then, so that a block takes launches from
// its start rather than from the next scheduled refresh.
func (p *Provider) NextStart(now time.Time) time.Time {
	p.mu.RLock()
	defer p.mu.RUnlock()
	var next time.Time
	for _, r := range p.byID {
		if r.State != string(ec2types.CapacityReservationStateScheduled) || now.After(r.Start.Add(startRechecks*startRecheck)) {
			continue
		}
		at := r.Start
		if !at.After(now) {
			at = now.Add(startRecheck)
		}
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	return next
}

// A block EC2 still shows scheduled after its start is looked at again
// every startRecheck, startRechecks times.
const (
	startRecheck  = 15 * time.Second
	startRechecks = 8
)

// Version changes whenever the reservations or their free capacity may have changed.
func (p *Provider) Version() uint64 { return p.version.Load() }

// Resolve lists the usable reservations a NodeClass's terms select: a term's
// fields are ANDed (id alone; tags, owner and match criteria together),
// terms are ORed. No terms select none.
func (p *Provider) Resolve(ctx context.Context, terms []v1alpha1.CapacityReservationSelectorTerm) ([]v1alpha1.CapacityReservation, error) {
	seen := map[string]bool{}
	var out []v1alpha1.CapacityReservation
	for _, t := range terms {
		in := &ec2.DescribeCapacityReservationsInput{Filters: append(usable(), termFilters(t)...)}
		if t.ID != "" {
			in.CapacityReservationIds = []string{t.ID}
		}
		pager := ec2.NewDescribeCapacityReservationsPaginator(p.ec2, in)
		for pager.HasMorePages() {
			page, err := pager.NextPage(ctx)
			if awserrors.Code(err) == "InvalidCapacityReservationId.NotFound" {
				break // a reservation that no longer exists selects nothing
			}
			if err != nil {
				return nil, fmt.Errorf("resolving capacity reservations: %w", err)
			}
			for _, cr := range page.CapacityReservations {
				id := aws.ToString(cr.CapacityReservationId)
				if seen[id] {
					continue
				}
				seen[id] = true
				out = append(out, resolved(cr))
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// resolved is a reservation as a NodeClass's status lists it.
func resolved(cr ec2types.CapacityReservation) v1alpha1.CapacityReservation {
	r := fromEC2(cr)
	out := v1alpha1.CapacityReservation{ID: r.ID, InstanceType: r.InstanceType, Zone: r.Zone, OwnerID: aws.ToString(cr.OwnerId),
		InstanceMatchCriteria: string(cr.InstanceMatchCriteria), ReservationType: r.Type, State: r.State}
	if !r.End.IsZero() {
		out.StartTime, out.EndTime = &metav1.Time{Time: r.Start}, &metav1.Time{Time: r.End}
	}
	return out
}

func termFilters(t v1alpha1.CapacityReservationSelectorTerm) []ec2types.Filter {
	filters := subnet.TagFilters(t.Tags)
	if t.OwnerID != "" {
		filters = append(filters, ec2types.Filter{Name: aws.String("owner-id"), Values: []string{t.OwnerID}})
	}
	if t.InstanceMatchCriteria != "" {
		filters = append(filters, ec2types.Filter{Name: aws.String("instance-match-criteria"), Values: []string{t.InstanceMatchCriteria}})
	}
	return filters
}
