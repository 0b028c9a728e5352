// Package capacityreservation keeps the On-Demand Capacity Reservations that
// reserved offerings launch into: a NodeClass selects them with its
// capacityReservationSelectorTerms (Resolve; none without terms), and their
// free capacity is discovered with DescribeCapacityReservations, counted
// down locally as launches use them, and replaced on every refresh.
package capacityreservation

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/awserrors"
	"github.com/stowage-dev/stowage/controller/aws/sdk"
	"github.com/stowage-dev/stowage/controller/aws/subnet"
)

// Reservation is one active reservation Stowage may launch into.
type Reservation struct {
	ID           string
	InstanceType string
	Zone         string
	// Available is how many more instances it takes, as far as Stowage knows.
	Available int
}

// Provider serves the last discovered reservations. Reads never call AWS.
type Provider struct {
	ec2 sdk.EC2API

	mu        sync.RWMutex
	byType    map[string][]Reservation // instance type -> reservations, by id
	available map[string]int           // reservation id -> instances it still takes
	version   atomic.Uint64
}

// NewProvider returns a provider with no reservations.
func NewProvider(ec2API sdk.EC2API) *Provider {
	return &Provider{ec2: ec2API, byType: map[string][]Reservation{}, available: map[string]int{}}
}

// usable are the filters of the reservations Stowage can launch into:
// active, Linux/UNIX, default tenancy.
func usable() []ec2types.Filter {
	return []ec2types.Filter{
		{Name: aws.String("state"), Values: []string{string(ec2types.CapacityReservationStateActive)}},
		{Name: aws.String("instance-platform"), Values: []string{string(ec2types.CapacityReservationInstancePlatformLinuxUnix)}},
		{Name: aws.String("tenancy"), Values: []string{string(ec2types.CapacityReservationTenancyDefault)}},
	}
}

// Refresh rediscovers the free capacity of every usable reservation the
// account can see (which ones a NodeClass launches into, Resolve says); on
// error the previous ones stay.
func (p *Provider) Refresh(ctx context.Context) error {
	in := &ec2.DescribeCapacityReservationsInput{Filters: usable()}
	byType, available := map[string][]Reservation{}, map[string]int{}
	pager := ec2.NewDescribeCapacityReservationsPaginator(p.ec2, in)
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("describing capacity reservations: %w", err)
		}
		for _, cr := range page.CapacityReservations {
			r := Reservation{ID: aws.ToString(cr.CapacityReservationId), InstanceType: aws.ToString(cr.InstanceType),
				Zone: aws.ToString(cr.AvailabilityZone), Available: int(aws.ToInt32(cr.AvailableInstanceCount))}
			byType[r.InstanceType] = append(byType[r.InstanceType], r)
			available[r.ID] = r.Available
		}
	}
	for _, rs := range byType {
		sort.Slice(rs, func(i, j int) bool { return rs[i].ID < rs[j].ID })
	}
	p.mu.Lock()
	p.byType, p.available = byType, available
	p.mu.Unlock()
	p.version.Add(1)
	return nil
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
		p.available[id] = f(n)
	}
	p.mu.Unlock()
	if ok {
		p.version.Add(1)
	}
}

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
				out = append(out, v1alpha1.CapacityReservation{ID: id, InstanceType: aws.ToString(cr.InstanceType),
					Zone: aws.ToString(cr.AvailabilityZone), OwnerID: aws.ToString(cr.OwnerId), InstanceMatchCriteria: string(cr.InstanceMatchCriteria)})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
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
