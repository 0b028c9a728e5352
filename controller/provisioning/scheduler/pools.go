package scheduler

import (
	"cmp"
	"math"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// pool is a NodePool prepared for solving.
type pool struct {
	np     *v1alpha1.NodePool
	name   string
	weight int32
	// reqs are the pool's requirements, its labels and its own name as requirements.
	reqs   scheduling.Requirements
	taints []corev1.Taint
	// types are the instance types the pool allows with an available offering, cheapest first.
	types []*typeOption
	// limits and usage for the resources the pool caps; limited says which are
	// capped. usage counts the existing nodes and in-flight claims (baseUsage)
	// and the reservations of this solve's claims (limits.go).
	limits, usage, baseUsage scheduling.Resources
	limited                  []corev1.ResourceName
	nodeLimit                int64
	nodes                    int64
	// claims counts the NodeClaims this solve created, for naming.
	claims int
	// topology key -> the values the pool's types offer, sorted
	offeredValues map[string][]string
}

// typeOption is an instance type as one pool offers it.
type typeOption struct {
	it *cloudprovider.InstanceType
	// alloc is the type's allocatable less the DaemonSet pods that would run on it.
	alloc     scheduling.Resources
	daemonSet scheduling.Resources
	price     float64
}

func newPool(np *v1alpha1.NodePool, types []*cloudprovider.InstanceType, daemonSets []*appsv1.DaemonSet, keys labelKeys) *pool {
	p := &pool{np: np, name: np.Name, taints: np.Spec.Template.Spec.Taints, nodeLimit: -1}
	if np.Spec.Weight != nil {
		p.weight = *np.Spec.Weight
	}
	p.reqs = scheduling.FromAPI(np.Spec.Template.Spec.Requirements).
		Merge(scheduling.FromLabels(np.Spec.Template.ObjectMeta.Labels)).
		Merge(scheduling.FromLabels(map[string]string{v1alpha1.LabelNodePool: np.Name}))
	p.setLimits(np.Spec.Limits)
	for _, it := range types {
		if !typeCompatible(it.Requirements, p.reqs) {
			continue
		}
		price := it.CheapestPrice(p.reqs)
		if math.IsInf(price, 1) {
			continue
		}
		ds := daemonSetOverhead(daemonSets, p, it, keys)
		p.types = append(p.types, &typeOption{it: it, alloc: it.Allocatable().Sub(ds), daemonSet: ds, price: price})
	}
	sortTypeOptions(p.types)
	return p
}

func sortTypeOptions(types []*typeOption) {
	slices.SortStableFunc(types, func(a, b *typeOption) int {
		return cmp.Or(cmp.Compare(a.price, b.price), cmp.Compare(a.it.Name, b.it.Name))
	})
}

func (p *pool) setLimits(limits corev1.ResourceList) {
	for _, name := range sortedResourceNames(limits) {
		q := limits[name]
		if name == "nodes" {
			p.nodeLimit = q.Value()
			continue
		}
		v := q.Value()
		if name == corev1.ResourceCPU {
			v = q.MilliValue()
		}
		p.limits.Set(name, v)
		p.limited = append(p.limited, name)
	}
}

func sortedResourceNames(rl corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(rl))
	for n := range rl {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// withinLimits reports whether adding capacity (and maybe one node) keeps the pool within its limits.
func (p *pool) withinLimits(capacity scheduling.Resources, newNode bool) (corev1.ResourceName, bool) {
	if newNode && p.nodeLimit >= 0 && p.nodes+1 > p.nodeLimit {
		return "nodes", false
	}
	for _, name := range p.limited {
		if p.usage.Get(name)+capacity.Get(name) > p.limits.Get(name) {
			return name, false
		}
	}
	return "", true
}

// daemonSetOverhead sums the requests of the DaemonSet pods that would run on a node
// of this type in this pool: those that tolerate the pool's taints and whose node
// affinity the node's labels satisfy.
func daemonSetOverhead(daemonSets []*appsv1.DaemonSet, p *pool, it *cloudprovider.InstanceType, keys labelKeys) scheduling.Resources {
	var total scheduling.Resources
	nodeReqs := p.reqs.Merge(it.Requirements)
	for _, ds := range daemonSets {
		pod := &corev1.Pod{ObjectMeta: ds.Spec.Template.ObjectMeta, Spec: ds.Spec.Template.Spec}
		if scheduling.Tolerates(p.taints, pod.Spec.Tolerations) != nil {
			continue
		}
		if !anyTermCompatible(nodeReqs, keys.terms(nodeRequirementTerms(pod))) {
			continue
		}
		total = total.Add(scheduling.PodRequests(pod))
	}
	return total
}

func anyTermCompatible(node scheduling.Requirements, terms []scheduling.Requirements) bool {
	for _, t := range terms {
		if node.Intersects(t) {
			return true
		}
	}
	return false
}

// domainsFor lists the values of a topology key that a pool can offer, given
// requirements that narrow it further.
func (p *pool) domainsFor(key string, reqs scheduling.Requirements) []string {
	allowed := p.reqs.Merge(reqs).Get(key)
	var out []string
	for _, v := range p.offered(key) {
		if allowed.Has(v) {
			out = append(out, v)
		}
	}
	return out
}

// offered lists, sorted, every value of key that some type of the pool has: for
// zone and capacity type, those of its available offerings. It is computed once
// per key.
func (p *pool) offered(key string) []string {
	if vs, ok := p.offeredValues[key]; ok {
		return vs
	}
	seen := map[string]bool{}
	for _, t := range p.types {
		switch key {
		case corev1.LabelTopologyZone, v1alpha1.LabelCapacityType:
			for _, o := range t.it.Offerings {
				if !o.Available {
					continue
				}
				if key == corev1.LabelTopologyZone {
					seen[o.Zone] = true
				} else {
					seen[o.CapacityType] = true
				}
			}
		default:
			for _, v := range p.reqs.Merge(t.it.Requirements).Get(key).Values() {
				seen[v] = true
			}
		}
	}
	vs := make([]string, 0, len(seen))
	for v := range seen {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	if p.offeredValues == nil {
		p.offeredValues = map[string][]string{}
	}
	p.offeredValues[key] = vs
	return vs
}
