package awsemu

import (
	"fmt"
	"math"
	"sort"
)

// Capacity types of a pool, as EC2 names them in CreateFleet.
const (
	CapacityOnDemand = "on-demand"
	CapacitySpot     = "spot"
)

// PoolKey names a capacity pool.
type PoolKey struct {
	InstanceType string
	Zone         string
	CapacityType string // CapacityOnDemand or CapacitySpot
}

// String renders the key as type/zone/capacity-type.
func (k PoolKey) String() string {
	return fmt.Sprintf("%s/%s/%s", k.InstanceType, k.Zone, k.CapacityType)
}

// Pool is the capacity EC2 has for one PoolKey.
type Pool struct {
	// Capacity is how many more instances the pool can start.
	Capacity int
	// Price is the hourly price in USD (the spot price for spot pools).
	Price float64
	// Short makes every launch in the pool fail with InsufficientInstanceCapacity,
	// whatever its capacity, until cleared.
	Short bool
}

func (e *Emulator) addTypeLocked(t InstanceTypeSpec) {
	if _, ok := e.types[t.Name]; !ok {
		e.typeOrder = append(e.typeOrder, t.Name)
	}
	e.types[t.Name] = t
	for _, z := range e.cfg.Zones {
		e.pools[PoolKey{t.Name, z.Name, CapacityOnDemand}] = &Pool{Capacity: e.cfg.PoolCapacity, Price: t.OnDemandPrice}
		e.pools[PoolKey{t.Name, z.Name, CapacitySpot}] = &Pool{Capacity: e.cfg.PoolCapacity, Price: e.spotPrice(t, z.Name)}
	}
}

// spotPrice gives each zone a slightly different, deterministic spot price.
func (e *Emulator) spotPrice(t InstanceTypeSpec, zone string) float64 {
	skew := 1 + 0.02*float64(zone[len(zone)-1]-'a')
	return math.Round(t.OnDemandPrice*e.cfg.SpotDiscount*skew*1e6) / 1e6
}

// AddInstanceType adds (or replaces) a type and creates its pools in every zone.
func (e *Emulator) AddInstanceType(t InstanceTypeSpec) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.addTypeLocked(t)
}

// InstanceTypes lists the emulated types in the order they were added.
func (e *Emulator) InstanceTypes() []InstanceTypeSpec {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]InstanceTypeSpec, 0, len(e.typeOrder))
	for _, n := range e.typeOrder {
		out = append(out, e.types[n])
	}
	return out
}

// Pool returns a copy of a pool and whether it exists.
func (e *Emulator) Pool(k PoolKey) (Pool, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, ok := e.pools[k]
	if !ok {
		return Pool{}, false
	}
	return *p, true
}

// SetPool replaces a pool's capacity, price and shortage flag, creating it if needed.
func (e *Emulator) SetPool(k PoolKey, p Pool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	cp := p
	e.pools[k] = &cp
}

// SetShortage marks pools short (every launch fails) or clears them.
func (e *Emulator) SetShortage(short bool, keys ...PoolKey) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, k := range keys {
		if p, ok := e.pools[k]; ok {
			p.Short = short
		}
	}
}

// SetCapacity sets how many more instances a pool can start.
func (e *Emulator) SetCapacity(k PoolKey, capacity int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p, ok := e.pools[k]; ok {
		p.Capacity = capacity
	}
}

// SetPrice sets a pool's hourly price.
func (e *Emulator) SetPrice(k PoolKey, price float64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p, ok := e.pools[k]; ok {
		p.Price = price
	}
}

// PoolKeys lists every pool, sorted.
func (e *Emulator) PoolKeys() []PoolKey {
	e.mu.Lock()
	defer e.mu.Unlock()
	keys := make([]PoolKey, 0, len(e.pools))
	for k := range e.pools {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	return keys
}
