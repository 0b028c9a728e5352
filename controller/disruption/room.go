package disruption

import (
	"math"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// room is what a round's simulations may count on, worked out once: each
// node that receives pods and its free room, and the pools' instance types.
// It gives the cheap bounds that rule a simulation out before it runs.
type room struct {
	names []string
	free  []scheduling.Resources
	// index is node name -> its position in names and free.
	index map[string]int
	total scheduling.Resources
	// largest is the element-wise largest allocatable of any type; types
	// are every pool's types.
	largest scheduling.Resources
	types   []*cloudprovider.InstanceType
}

// room returns the round's room, computing it once.
func (r *Round) room() *room {
	if r.memo != nil && r.memo.room != nil {
		return r.memo.room
	}
	rm := &room{index: map[string]int{}}
	for _, sn := range r.Snapshot.Nodes {
		if sn.MarkedForDeletion || r.Busy[sn.Name()] || !receives(sn) {
			continue
		}
		f := r.nodeFree(sn)
		rm.index[sn.Name()] = len(rm.names)
		rm.names, rm.free, rm.total = append(rm.names, sn.Name()), append(rm.free, f), rm.total.Add(f)
	}
	for _, types := range r.Snapshot.InstanceTypes {
		for _, it := range types {
			rm.types = append(rm.types, it)
			rm.largest = rm.largest.Max(it.Allocatable())
		}
	}
	if r.memo != nil {
		r.memo.room = rm
	}
	return rm
}

// freeOf is a receiver's free room; nothing for a node that receives none.
func (rm *room) freeOf(name string) scheduling.Resources {
	if i, ok := rm.index[name]; ok {
		return rm.free[i]
	}
	return scheduling.Resources{}
}

// freeExcept is the receivers' free room without the candidates' own.
func (rm *room) freeExcept(cands []*Candidate) scheduling.Resources {
	free := rm.total
	for _, c := range cands {
		free = free.Sub(rm.freeOf(c.Name()))
	}
	return free
}

// mayHold reports whether the other receivers could hold the candidates'
// pods at all, and a lower bound on what a new node would have to take:
// the copies of their smallest pod (in CPU and in memory) that fit node by
// node must be at least as many as the pods, and each pod beyond those
// copies needs at least the smallest pod's room elsewhere. A necessary
// condition, so a false rules a deletion out without a solve.
func (rm *room) mayHold(r *Round, cands []*Candidate) (ok bool, beyond scheduling.Resources) {
	gone := map[string]bool{}
	smallest := scheduling.Resources{CPU: math.MaxInt64, Memory: math.MaxInt64}
	pods := 0
	for _, c := range cands {
		gone[c.Name()] = true
		for _, p := range c.ReschedulablePods() {
			req := r.requestsOf(p)
			smallest.CPU, smallest.Memory = min(smallest.CPU, req.CPU), min(smallest.Memory, req.Memory)
		}
		pods += len(c.ReschedulablePods())
	}
	slots := 0
	for i, f := range rm.free {
		if gone[rm.names[i]] {
			continue
		}
		slots += int(min(per(f.CPU, smallest.CPU), per(f.Memory, smallest.Memory), f.Pods))
		if slots >= pods {
			return true, scheduling.Resources{}
		}
	}
	n := int64(pods - slots)
	return false, scheduling.Resources{CPU: n * smallest.CPU, Memory: n * smallest.Memory, Pods: n}
}

// per is how many of each fit in free; any number when each is nothing.
func per(free, each int64) int64 {
	if each <= 0 {
		return math.MaxInt32
	}
	return free / each
}

// cheapest is the price of the cheapest available offering (on-demand only
// when onDemand) of any type whose allocatable holds need, +Inf when none
// does: a lower bound on what a new node that takes need costs.
func (rm *room) cheapest(need scheduling.Resources, onDemand bool) float64 {
	best := math.Inf(1)
	for _, it := range rm.types {
		if !fitsRoughly(need, it.Allocatable()) {
			continue
		}
		for _, o := range it.Offerings {
			if o.Available && o.Price < best && (!onDemand || o.CapacityType == v1alpha1.CapacityTypeOnDemand) {
				best = o.Price
			}
		}
	}
	return best
}
