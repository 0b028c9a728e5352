package awsemu

import "sort"

// Allocation strategies of CreateFleet's SpotOptions and OnDemandOptions.
const (
	StrategyLowestPrice                  = "lowest-price"
	StrategyPrioritized                  = "prioritized"
	StrategyCapacityOptimized            = "capacity-optimized"
	StrategyCapacityOptimizedPrioritized = "capacity-optimized-prioritized"
	StrategyPriceCapacityOptimized       = "price-capacity-optimized"
)

// candidate is one override as an allocation strategy weighs it.
type candidate struct {
	price    float64
	depth    int // instances its pool can still start: Pool.Capacity, 0 when short
	priority float64
	reserved bool // it launches into a capacity reservation with room
}

// allocationOrder returns the candidates' indexes in the order a fleet with
// the strategy tries them, as the EC2 API Reference (SpotOptionsRequest,
// OnDemandOptionsRequest) describes the strategies:
//   - lowest-price (and diversified, which matters only for more than one
//     instance): the lowest-priced pool first;
//   - prioritized: the override priorities, lowest first, then price;
//   - capacity-optimized: "the pools with the highest capacity availability",
//     the deepest first, whatever their price;
//   - price-capacity-optimized: "the pools with the highest capacity
//     availability", then "the lowest priced of these pools";
//   - capacity-optimized-prioritized: capacity first, the priorities within it
//     ("on a best-effort basis").
//
// "Highest capacity availability" is a tier: the pools at least half as deep
// as the deepest pool not yet placed; the next tier is taken from the rest
// the same way. With use-capacity-reservations-first, overrides with a
// reservation go first, whatever the strategy.
func allocationOrder(strategy string, cands []candidate) []int {
	idx := make([]int, len(cands))
	for i := range idx {
		idx[i] = i
	}
	tier := depthTiers(cands)
	sort.SliceStable(idx, func(x, y int) bool {
		a, b := cands[idx[x]], cands[idx[y]]
		if a.reserved != b.reserved {
			return a.reserved
		}
		switch strategy {
		case StrategyCapacityOptimized:
			return a.depth > b.depth
		case StrategyPriceCapacityOptimized:
			if tier[idx[x]] != tier[idx[y]] {
				return tier[idx[x]] < tier[idx[y]]
			}
		case StrategyCapacityOptimizedPrioritized:
			if tier[idx[x]] != tier[idx[y]] {
				return tier[idx[x]] < tier[idx[y]]
			}
			return a.priority < b.priority
		case StrategyPrioritized:
			if a.priority != b.priority {
				return a.priority < b.priority
			}
		}
		return a.price < b.price
	})
	return idx
}

// depthTiers numbers each candidate's capacity tier, 0 the deepest: a tier
// holds the candidates at least half as deep as the deepest one left.
func depthTiers(cands []candidate) []int {
	tier := make([]int, len(cands))
	placed := make([]bool, len(cands))
	for t, left := 0, len(cands); left > 0; t++ {
		deepest := -1
		for i, c := range cands {
			if !placed[i] && c.depth > deepest {
				deepest = c.depth
			}
		}
		for i, c := range cands {
			if !placed[i] && 2*c.depth >= deepest {
				tier[i], placed[i] = t, true
				left--
			}
		}
	}
	return tier
}
