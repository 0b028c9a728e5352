package disruption

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/state"
	"github.com/stowage-dev/stowage/controller/termination"
)

// blockedBy returns why no method may disrupt the candidate now, first found
// first: the node, its NodeClaim or one of its pods asks not to be disrupted
// (Stowage's annotation or Karpenter's, "true" or a duration since it
// started); a PodDisruptionBudget allows none of its pods to be evicted
// (for a paced method, only one that would allow none with all its pods
// healthy); pending pods are expected on it; or it became Ready so recently
// that the pods kube-scheduler is binding may not show yet.
func blockedBy(c *Candidate, pdbs pdbIndex, paced bool, now time.Time) Block {
	if b := doNotDisruptBlock("node "+c.Node.Name, c.Node.Annotations, c.Node.CreationTimestamp.Time, now); b.Kind != "" {
		return b
	}
	if b := doNotDisruptBlock("nodeclaim "+c.NodeClaim.Name, c.NodeClaim.Annotations, c.NodeClaim.CreationTimestamp.Time, now); b.Kind != "" {
		return b
	}
	for _, p := range c.podSummary().protected {
		if b := doNotDisruptBlock("pod "+p.Namespace+"/"+p.Name, p.Annotations, termination.PodStart(p), now); b.Kind != "" {
			return b
		}
	}
	for _, p := range c.ReschedulablePods() {
		if scheduler.IsVirtual(p) {
			continue // booked room (booked.go) is never evicted
		}
		if pdb := pdbs.blocking(p, paced); pdb != nil {
			return Block{Kind: BlockedPDB, Why: fmt.Sprintf("PodDisruptionBudget %s/%s allows no disruption of pod %s/%s now",
				pdb.Namespace, pdb.Name, p.Namespace, p.Name)}
		}
	}
	if c.Nominated {
		return Block{Kind: BlockedNominated, Why: "pending pods are expected on it"}
	}
	return justReady(c.Node, now)
}

func doNotDisruptBlock(what string, annotations map[string]string, start, now time.Time) Block {
	protected, until := termination.DoNotDisruptUntil(annotations, start, now)
	switch {
	case !protected:
		return Block{}
	case until.IsZero():
		return Block{Kind: BlockedDoNotDisrupt, Why: what + " is annotated do-not-disrupt"}
	}
	return Block{Kind: BlockedDoNotDisrupt, Why: fmt.Sprintf("%s is annotated do-not-disrupt until %s", what, until.UTC().Format(time.RFC3339)),
		Until: until}
}

// justReady blocks a node that became Ready less than state.NominationGrace
// ago: kube-scheduler may still be binding the pods nominated to it, so an
// empty look does not mean the node is unneeded.
func justReady(node *corev1.Node, now time.Time) Block {
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue && now.Sub(cond.LastTransitionTime.Time) < state.NominationGrace {
			return Block{Kind: BlockedJustReady, Why: fmt.Sprintf("node became Ready %s ago; the pods nominated to it may still be binding",
				now.Sub(cond.LastTransitionTime.Time).Round(time.Second)), Until: cond.LastTransitionTime.Add(state.NominationGrace)}
		}
	}
	return Block{}
}

// pdbIndex holds the PDBs that allow no disruption now, by namespace, with
// their selectors parsed once per round.
type pdbIndex map[string][]parsedPDB

type parsedPDB struct {
	pdb      *policyv1.PodDisruptionBudget
	selector labels.Selector
	// paces: the budget allows some disruption once its pods are healthy
	// (it expects more than it needs healthy), so that a drain it refuses
	// now goes on as they come back.
	paces bool
}

func newPDBIndex(pdbs []*policyv1.PodDisruptionBudget) pdbIndex {
	out := pdbIndex{}
	for _, pdb := range pdbs {
		if pdb.Status.DisruptionsAllowed > 0 || pdb.Spec.Selector == nil {
			continue
		}
		// An empty selector matches every pod of the namespace, as the
		// Eviction API reads it; an unreadable one matches none.
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil {
			continue
		}
		paces := pdb.Status.ExpectedPods > pdb.Status.DesiredHealthy
		out[pdb.Namespace] = append(out[pdb.Namespace], parsedPDB{pdb: pdb, selector: sel, paces: paces})
	}
	return out
}

// blocking returns a PDB that would refuse the pod's eviction now, or nil;
// when paced, only one that does not pace evictions.
func (ix pdbIndex) blocking(p *corev1.Pod, paced bool) *policyv1.PodDisruptionBudget {
	for _, pp := range ix[p.Namespace] {
		if !(paced && pp.paces) && pp.selector.Matches(labels.Set(p.Labels)) {
			return pp.pdb
		}
	}
	return nil
}

// nodePrices remembers each node's offering from round to round while the
// pools' offerings stay the same (a Node object is never changed in place):
// reading them from the nodes' labels was most of what pricing the fleet
// cost.
type nodePrices struct {
	key       uint64 // offeringsKey of the pools' types
	last, now map[poolNode]NodeOffering
	index     priceIndex // built for the round when first needed
}

type poolNode struct {
	pool string
	node *corev1.Node
}

// next starts a round whose pools' offerings have key.
func (np *nodePrices) next(key uint64) *nodePrices {
	out := &nodePrices{key: key, now: map[poolNode]NodeOffering{}}
	if np != nil && np.key == key {
		out.last = np.now
	}
	return out
}

// offering returns the node's offering in its pool, remembered or read.
func (r *Round) offering(pool string, node *corev1.Node) NodeOffering {
	np := r.memo.pricesOrNil()
	if np == nil {
		return newPriceIndex(r.Snapshot).offering(pool, node)
	}
	k := poolNode{pool, node}
	if o, ok := np.now[k]; ok {
		return o
	}
	o, ok := np.last[k]
	if !ok {
		if np.index == nil {
			np.index = newPriceIndex(r.Snapshot)
		}
		o = np.index.offering(pool, node)
	}
	np.now[k] = o
	return o
}

func (m *memo) pricesOrNil() *nodePrices {
	if m == nil {
		return nil
	}
	return m.prices
}

// priceIndex finds a node's offering among its pool's instance types.
type priceIndex map[string]map[string]*cloudprovider.InstanceType // pool -> type name -> type

func newPriceIndex(s *scheduler.Snapshot) priceIndex {
	out := priceIndex{}
	for pool, types := range s.InstanceTypes {
		byName := make(map[string]*cloudprovider.InstanceType, len(types))
		for _, it := range types {
			byName[it.Name] = it
		}
		out[pool] = byName
	}
	return out
}

// offering reads the node's offering from its labels and prices it with the
// pool's offering of the same zone and capacity type, available or not (the
// node runs on it either way).
func (ix priceIndex) offering(pool string, node *corev1.Node) NodeOffering {
	o := NodeOffering{InstanceType: node.Labels[corev1.LabelInstanceTypeStable], Zone: node.Labels[corev1.LabelTopologyZone],
		CapacityType: node.Labels[v1alpha1.LabelCapacityType]}
	it, ok := ix[pool][o.InstanceType]
	if !ok {
		return o
	}
	for _, of := range it.Offerings {
		if of.Zone == o.Zone && of.CapacityType == o.CapacityType {
			o.Price, o.PriceKnown = of.Price, true
			return o
		}
	}
	return o
}
