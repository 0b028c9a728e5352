// Package checker re-verifies a scheduling decision against its snapshot, on a
// code path of its own: it shares no logic with the solver or with the
// scheduling package's requirement algebra, and leans on Kubernetes'
// component-helpers for node affinity and taints and on apimachinery for label
// selectors. Every rule is checked in the final state (the pods already bound
// plus every placement the decision makes) except topology spread, which
// kube-scheduler checks only when a pod binds: it is replayed in the decision's
// Order.
package checker

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// Check re-verifies r against s and returns every violation found, in a
// deterministic order; an empty result means the decision holds.
func Check(s *scheduler.Snapshot, r *scheduler.Results) []Violation {
	c := newChecker(s, r)
	c.checkAccounting()
	c.buildExisting()
	c.buildClaims()
	c.placeOnExisting()
	c.checkResources()
	c.checkNodeFit()
	c.checkTopologySpread()
	c.checkPodAffinity()
	c.checkHostPorts()
	c.checkLimits()
	return c.out
}

// checker holds the final state the rules are checked against.
type checker struct {
	snap  *scheduler.Snapshot
	res   *scheduler.Results
	pools map[string]*v1alpha1.NodePool
	// pool name -> instance type names the pool offers
	poolTypes map[string]map[string]bool
	nodes     []*node
	byName    map[string]*node
	pods      []*podAt
	out       []Violation
	// dedupe key -> already reported
	reported map[string]bool
	// instance type -> its single-valued labels
	typeLabels map[*cloudprovider.InstanceType]map[string]string
	// instance type -> allocatable
	allocatable map[*cloudprovider.InstanceType]res
}

// podAt is a pod in the final state and the node it is on.
type podAt struct {
	pod  *corev1.Pod
	node *node
	// placed is true for a pending pod the decision placed, false for a bound pod.
	placed bool
}

func newChecker(s *scheduler.Snapshot, r *scheduler.Results) *checker {
	c := &checker{snap: s, res: r, pools: map[string]*v1alpha1.NodePool{}, poolTypes: map[string]map[string]bool{},
		byName: map[string]*node{}, reported: map[string]bool{},
		typeLabels: map[*cloudprovider.InstanceType]map[string]string{}, allocatable: map[*cloudprovider.InstanceType]res{}}
	for _, p := range s.NodePools {
		c.pools[p.Name] = p
		names := map[string]bool{}
		for _, it := range s.InstanceTypes[p.Name] {
			names[it.Name] = true
		}
		c.poolTypes[p.Name] = names
	}
	return c
}

// report records a violation.
func (c *checker) report(pod *corev1.Pod, node string, constraint Constraint, format string, args ...any) {
	v := Violation{Node: node, Constraint: constraint, Message: fmt.Sprintf(format, args...)}
	if pod != nil {
		v.Pod = podKey(pod)
	}
	c.out = append(c.out, v)
}

// reportOnce records a violation unless one with the same key was recorded.
func (c *checker) reportOnce(key string, pod *corev1.Pod, node string, constraint Constraint, format string, args ...any) {
	if c.reported[key] {
		return
	}
	c.reported[key] = true
	c.report(pod, node, constraint, format, args...)
}

// checkAccounting verifies that every pending pod appears exactly once in the
// decision and that the decision names no other pod.
func (c *checker) checkAccounting() {
	seen := map[string]int{}
	pending := map[string]bool{}
	for _, p := range c.snap.Pending() {
		pending[podKey(p)] = true
	}
	count := func(p *corev1.Pod, where string) {
		seen[podKey(p)]++
		if !pending[podKey(p)] {
			c.report(p, where, ConstraintPlacement, "pod is in the decision but is not a pending pod of the snapshot")
		}
	}
	for _, pl := range c.res.Existing {
		count(pl.Pod, pl.Node)
	}
	for _, nc := range c.res.NewNodeClaims {
		for _, p := range nc.Pods {
			count(p, nc.Name)
		}
	}
	for _, u := range c.res.Unschedulable {
		count(u.Pod, "")
	}
	for _, u := range c.res.Waiting {
		count(u.Pod, "")
	}
	c.checkOrder()
	c.checkWaitingPriorities()
	for _, p := range c.snap.Pending() {
		switch n := seen[podKey(p)]; {
		case n == 0:
			c.report(p, "", ConstraintPlacement, "pending pod is neither placed nor reported unschedulable or waiting")
		case n > 1:
			c.report(p, "", ConstraintPlacement, "pending pod appears %d times in the decision", n)
		}
	}
}

// checkOrder verifies that the decision's Order lists every placed pod once.
func (c *checker) checkOrder() {
	placed := map[*corev1.Pod]string{}
	var inOrder []scheduler.Placement
	for _, pl := range c.res.Existing {
		placed[pl.Pod] = pl.Node
		inOrder = append(inOrder, pl)
	}
	for _, nc := range c.res.NewNodeClaims {
		for _, p := range nc.Pods {
			placed[p] = nc.Name
			inOrder = append(inOrder, scheduler.Placement{Pod: p, Node: nc.Name})
		}
	}
	listed := map[*corev1.Pod]bool{}
	for _, p := range c.res.Order {
		node, ok := placed[p]
		switch {
		case !ok:
			c.report(p, "", ConstraintPlacement, "pod is in the decision's order but is not placed")
		case listed[p]:
			c.report(p, node, ConstraintPlacement, "pod is in the decision's order twice")
		}
		listed[p] = true
	}
	for _, pl := range inOrder {
		if !listed[pl.Pod] {
			c.report(pl.Pod, pl.Node, ConstraintPlacement, "placed pod is missing from the decision's order")
		}
	}
}

// labelsOf returns (and caches) an instance type's single-valued labels.
func (c *checker) labelsOf(it *cloudprovider.InstanceType) map[string]string {
	l, ok := c.typeLabels[it]
	if !ok {
		l = typeLabels(it)
		c.typeLabels[it] = l
	}
	return l
}

// allocatableOf returns (and caches) an instance type's allocatable resources.
func (c *checker) allocatableOf(it *cloudprovider.InstanceType) res {
	a, ok := c.allocatable[it]
	if !ok {
		a = fromResources(it.Capacity)
		for _, o := range []res{fromResources(it.Overhead.KubeReserved), fromResources(it.Overhead.SystemReserved), fromResources(it.Overhead.EvictionThreshold)} {
			for name, v := range o {
				a[name] -= v
			}
		}
		c.allocatable[it] = a
	}
	return a
}
