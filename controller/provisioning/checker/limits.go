package checker

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// resourceNodes is the pseudo-resource a pool limit uses to cap its node count.
const resourceNodes corev1.ResourceName = "nodes"

// checkLimits verifies that no pool's limits are exceeded by the capacity of its
// existing nodes and in-flight claims plus, for each new claim, the largest
// instance type it could launch.
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

// poolUsage sums the capacity of the pool's existing nodes and in-flight claims.
func (c *checker) poolUsage(pool string) res {
	usage := res{}
	for _, n := range c.nodes {
		if n.isNew() || n.pool != pool {
			continue
		}
		if n.state.Node != nil {
			usage.add(fromList(n.state.Node.Status.Capacity))
		} else {
			usage.add(fromList(n.state.NodeClaim.Status.Capacity))
		}
		usage[resourceNodes] += 1000
	}
	return usage
}

// largestCapacity is, resource by resource, the most any listed type could bring.
func largestCapacity(n *node) res {
	out := res{}
	for _, it := range n.claim.InstanceTypes {
		out.maxWith(fromResources(it.Capacity))
	}
	return out
}
