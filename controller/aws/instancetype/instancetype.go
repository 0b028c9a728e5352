// Package instancetype discovers EC2 instance types (DescribeInstanceTypes and
// DescribeInstanceTypeOfferings), prices them, and builds the same
// cloudprovider.InstanceType shape as the built-in catalogue.
package instancetype

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"k8s.io/utils/clock"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/cache"
	"github.com/stowage-dev/stowage/controller/aws/capacityreservation"
	"github.com/stowage-dev/stowage/controller/aws/pricing"
	"github.com/stowage-dev/stowage/controller/aws/sdk"
	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
)

// Query says which instance types a NodeClass can launch.
type Query struct {
	// Zones the NodeClass's subnets span; offerings exist only there.
	Zones   []string
	Kubelet *v1alpha1.KubeletConfiguration
	// RootVolumeGiB sizes ephemeral storage; the catalogue default when zero.
	RootVolumeGiB int64
	// InstanceStoreRAID0 puts ephemeral storage on the instance store.
	InstanceStoreRAID0 bool
	// Bottlerocket says the nodes boot Bottlerocket (catalogue.Options).
	Bottlerocket bool
	// Reservations are the ids of the capacity reservations the NodeClass
	// selects: the only ones it gets reserved offerings for.
	Reservations []string
}

func (q Query) key() string {
	b, _ := json.Marshal(q) //nolint:errchkjson // plain data
	return string(b)
}

// Provider serves instance types from the last discovery, refreshed by
// Refresh; reads never call AWS once a first discovery has succeeded.
type Provider struct {
	ec2          sdk.EC2API
	prices       *pricing.Provider
	reservations *capacityreservation.Provider
	unavailable  *cache.Unavailable
	region       string
	clk          clock.Clock
	log          hclog.Logger

	cur     atomic.Pointer[discovered]
	version atomic.Uint64
	initMu  sync.Mutex

	mu    sync.Mutex
	built map[string]*builtList // query key -> types built for it
}

type builtList struct {
	stamp     [4]uint64 // discovery version, price version, reservation version, shortage seq
	expiresAt time.Time // when the first shortage it reflects lapses
	types     []*cloudprovider.InstanceType
}

// NewProvider returns a provider with nothing discovered yet. Prices and
// reservations are refreshed by their owners; this provider reads them.
func NewProvider(ec2API sdk.EC2API, prices *pricing.Provider, reservations *capacityreservation.Provider, unavailable *cache.Unavailable,
	region string, clk clock.Clock, log hclog.Logger) *Provider {
	return &Provider{ec2: ec2API, prices: prices, reservations: reservations, unavailable: unavailable, region: region, clk: clk, log: log,
		built: map[string]*builtList{}}
}

// Refresh rediscovers types and offerings and swaps them in; on error the
// previous discovery stays.
func (p *Provider) Refresh(ctx context.Context) error {
	d, err := p.discover(ctx)
	if err != nil {
		return err
	}
	p.cur.Store(d)
	p.version.Add(1)
	p.log.Debug("discovered instance types", "count", len(d.infos))
	return nil
}

// ensure runs a first discovery (and price refresh) when none has succeeded;
// later reads never wait.
func (p *Provider) ensure(ctx context.Context) error {
	if p.cur.Load() != nil {
		return nil
	}
	p.initMu.Lock()
	defer p.initMu.Unlock()
	if p.cur.Load() != nil {
		return nil
	}
	if p.prices.Version() == 0 {
		if err := p.prices.Refresh(ctx); err != nil {
			p.log.Warn("pricing from the built-in table", "error", err)
		}
	}
	if p.reservations.Version() == 0 {
		if err := p.reservations.Refresh(ctx); err != nil {
			p.log.Warn("no reserved offerings until capacity reservations can be listed", "error", err)
		}
	}
	return p.Refresh(ctx)
}

// List returns the types a NodeClass can launch, with offerings in its zones,
// priced, and marked unavailable while the shortage memory avoids them. The
// result is shared: callers must not modify it.
func (p *Provider) List(ctx context.Context, q Query) ([]*cloudprovider.InstanceType, error) {
	if err := p.ensure(ctx); err != nil {
		return nil, fmt.Errorf("listing instance types: %w", err)
	}
	stamp := [4]uint64{p.version.Load(), p.prices.Version(), p.reservations.Version(), p.unavailable.Seq()}
	key := q.key()
	p.mu.Lock()
	defer p.mu.Unlock()
	if b, ok := p.built[key]; ok && b.stamp == stamp && !p.expired(b) {
		return b.types, nil
	}
	expiresAt := p.unavailable.NextExpiry()
	types := p.build(q)
	p.built[key] = &builtList{stamp: stamp, expiresAt: expiresAt, types: types}
	return types, nil
}

// expired reports whether a shortage has lapsed since the list was built.
func (p *Provider) expired(b *builtList) bool {
	return !b.expiresAt.IsZero() && !p.clk.Now().Before(b.expiresAt)
}

func (p *Provider) build(q Query) []*cloudprovider.InstanceType {
	d := p.cur.Load()
	opts := catalogue.Options{Region: p.region, Zones: q.Zones, Kubelet: q.Kubelet, RootVolumeGiB: q.RootVolumeGiB,
		InstanceStoreRAID0: q.InstanceStoreRAID0, Bottlerocket: q.Bottlerocket}
	out := make([]*cloudprovider.InstanceType, 0, len(d.infos))
	for _, info := range d.infos {
		od, ok := p.prices.OnDemand(info.Name)
		if !ok {
			continue // a type with no price cannot be compared, so it is never launched
		}
		info.OnDemandPrice = od
		ofs := p.offerings(info, d.zones[info.Name], q)
		if len(ofs) == 0 {
			continue
		}
		out = append(out, catalogue.NewInstanceType(info, opts, ofs))
	}
	return out
}

func (p *Provider) offerings(info catalogue.Info, typeZones []string, q Query) cloudprovider.Offerings {
	ofs := p.reserved(info.Name, q)
	for _, zone := range q.Zones {
		if !slices.Contains(typeZones, zone) {
			continue
		}
		if spot, ok := p.prices.Spot(info.Name, zone); ok {
			ofs = append(ofs, p.offering(info.Name, zone, v1alpha1.CapacityTypeSpot, spot))
		}
		ofs = append(ofs, p.offering(info.Name, zone, v1alpha1.CapacityTypeOnDemand, info.OnDemandPrice))
	}
	return ofs
}

// reserved lists one offering per capacity reservation of the type that the
// class selects, in its zones. Its price is 0: a reservation (a Capacity
// Block too) is paid for whether or not an instance runs in it, so launching
// into it costs nothing more. A block carries its window, which the solver
// narrows by the pool's lead time; one not started yet has no room.
func (p *Provider) reserved(name string, q Query) cloudprovider.Offerings {
	var ofs cloudprovider.Offerings
	for _, r := range p.reservations.ForType(name) {
		if !slices.Contains(q.Zones, r.Zone) || !slices.Contains(q.Reservations, r.ID) {
			continue
		}
		o := p.offering(name, r.Zone, v1alpha1.CapacityTypeReserved, 0)
		o.Available = o.Available && r.Available > 0
		o.ReservationID, o.ReservationCapacity, o.ReservationType = r.ID, r.Available, r.Type
		if !r.End.IsZero() {
			o.ReservationStart, o.ReservationEnd = r.Start, r.End
		}
		ofs = append(ofs, o)
	}
	return ofs
}

func (p *Provider) offering(name, zone, ct string, price float64) cloudprovider.Offering {
	o := cache.Offering{InstanceType: name, Zone: zone, CapacityType: ct}
	return cloudprovider.Offering{Zone: zone, CapacityType: ct, Price: price, Available: !p.unavailable.IsUnavailable(o),
		RecentShortages: p.unavailable.RecentShortages(o)}
}
