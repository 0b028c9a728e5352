package checker

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// resourceNodes is the pseudo-resource a pool limit uses to cap its node count.
const resourceNodes corev1.ResourceName = "nodes"

// checkLimits verifies that no pool's limits are exceeded by the capacity of its
// existing nodes and in-flight claims (at their worst case until they launch)
// plus, for each new claim, the largest instance type it could launch.
func (c *checker) checkLimits() {
	for _, pool := range c.snap.NodePools {
		if len(pool.Spec.Limits) == 0 {
			continue
		}
		existing, added := c.poolUsage(pool.Name), res{}
		for _, n := range c.nodes {
			if n.isNew() && n.pool == pool.Name {
				added.add(largestCapacity(n))
				added[resourceNodes] += 1000
			}
		}
		if len(added) > 0 {
			c.checkPoolLimits(pool, existing, added)
		}
	}
}

func (c *checker) checkPoolLimits(pool *v1alpha1.NodePool, existing, added res) {
	total := existing.clone()
	total.add(added)
	for _, rn := range sortedKeys(pool.Spec.Limits) {
		limit := pool.Spec.Limits[rn]
		if total[rn] > limit.MilliValue() {
			c.report(nil, pool.Name, ConstraintLimits, "nodepool %s limit %s %s exceeded: existing %s + new claims (largest types) %s",
				pool.Name, rn, limit.String(), quantity(rn, existing[rn]), quantity(rn, added[rn]))
		}
	}
}

// poolUsage sums the capacity of the pool's existing nodes and in-flight
// claims: a claim not launched yet at its worst case, since its launch may
// still fall back to any type it allows.
func (c *checker) poolUsage(pool string) res {
	usage := res{}
	for _, n := range c.nodes {
		if n.isNew() || n.pool != pool {
			continue
		}
		switch nc := n.state.NodeClaim; {
		case n.state.Node != nil:
			usage.add(fromList(n.state.Node.Status.Capacity))
		case len(nc.Status.Capacity) > 0:
			usage.add(fromList(nc.Status.Capacity))
		default:
			usage.add(c.unlaunchedCapacity(nc, pool))
		}
		usage[resourceNodes] += 1000
	}
	return usage
}

// unlaunchedCapacity is the most a claim not launched yet may bring: the
// largest capacity, resource by resource, of its pool's instance types that
// its requirements allow by name; its requests when they allow none.
func (c *checker) unlaunchedCapacity(nc *v1alpha1.NodeClaim, pool string) res {
	reqs, out, found := apiReqs(nc.Spec.Requirements), res{}, false
	for _, it := range c.snap.InstanceTypes[pool] {
		if reqs.allows(corev1.LabelInstanceTypeStable, it.Name, true) {
			out.maxWith(fromResources(it.Capacity))
			found = true
		}
	}
	if !found {
		return fromList(nc.Spec.Resources.Requests)
	}
	return out
}

// largestCapacity is, resource by resource, the most any listed type could bring.
func largestCapacity(n *node) res {
	out := res{}
	for _, it := range n.claim.InstanceTypes {
		out.maxWith(fromResources(it.Capacity))
	}
	return out
}
