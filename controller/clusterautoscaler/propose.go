package clusterautoscaler

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/catalogue"
)

// Options shape a proposal.
type Options struct {
	// Cluster names the EKS cluster, for the security group selector; the
	// node groups' cluster when empty.
	Cluster string
	// NodeRole is the nodes' IAM role; the managed node groups' when empty.
	NodeRole string
	// MaxTypes caps each pool's instance types (MaxTypes when zero).
	MaxTypes int
	// Catalogue holds the instance facts; the built-in catalogue when nil.
	Catalogue []catalogue.Info
}

// Proposal is the pools and classes that serve the node groups' workloads.
type Proposal struct {
	NodePools   []*v1alpha1.NodePool
	NodeClasses []*v1alpha1.NodeClass
	// Notes say, per pool or class name, which groups it replaces, how its
	// types were widened, and what was not carried over.
	Notes map[string][]string
}

// class is the node groups that serve the same pods: the same labels, taints
// and image family.
type class struct {
	key    string
	groups []*NodeGroup
}

// Propose turns node groups into pools: one per class of groups (the same
// labels, taints and image family) and capacity type, spot tried first
// (weight 100) and on-demand as its fallback (weight 10) where a class has
// both; the class's instance types diversified (Diversify); zones as the
// groups'; limits that never exceed what the groups' maximum sizes could
// reach; WhenEmpty consolidation for GPU pools. Each pool and class is
// checked by the API types' validation.
func Propose(groups []*NodeGroup, o Options) (*Proposal, error) {
	if o.Catalogue == nil {
		o.Catalogue = catalogue.Builtin()
	}
	if o.MaxTypes == 0 {
		o.MaxTypes = MaxTypes
	}
	p := &Proposal{Notes: map[string][]string{}}
	classes, err := p.nodeClasses(groups, o)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, c := range classify(groups) {
		for _, ct := range []string{"spot", "on-demand", "reserved"} {
			var members []*NodeGroup
			for _, g := range c.groups {
				if slices.Contains(g.CapacityTypes, ct) {
					members = append(members, g)
				}
			}
			if len(members) == 0 {
				continue
			}
			split := len(capacityTypes(c.groups)) > 1
			p.NodePools = append(p.NodePools, p.pool(c, members, ct, split, classes[c.groups[0].AMIFamily], names, o))
		}
	}
	var errs []error
	for _, np := range p.NodePools {
		check := np.DeepCopy()
		check.SetDefaults()
		for _, e := range check.Validate() {
			errs = append(errs, fmt.Errorf("proposed NodePool %s: %s", np.Name, e))
		}
	}
	return p, errors.Join(errs...)
}

func classify(groups []*NodeGroup) []*class {
	byKey := map[string]*class{}
	var out []*class
	for _, g := range groups {
		key := g.AMIFamily + "|" + labelsKey(g.Labels) + "|" + taintsKey(g.Taints)
		c, ok := byKey[key]
		if !ok {
			c = &class{key: key}
			byKey[key] = c
			out = append(out, c)
		}
		c.groups = append(c.groups, g)
	}
	return out
}

func capacityTypes(groups []*NodeGroup) []string {
	var out []string
	for _, g := range groups {
		for _, ct := range g.CapacityTypes {
			if !slices.Contains(out, ct) {
				out = append(out, ct)
			}
		}
	}
	return out
}

// resourceGPU is NVIDIA's device plugin resource.
const resourceGPU corev1.ResourceName = "nvidia.com/gpu"

var unsafeName = regexp.MustCompile(`[^a-z0-9-]+`)

// poolName is a DNS name from the first group's, unique among names.
func poolName(base, suffix string, names map[string]bool) string {
	n := strings.Trim(unsafeName.ReplaceAllString(strings.ToLower(base), "-"), "-")
	if n == "" {
		n = "pool"
	}
	if suffix != "" && !strings.HasSuffix(n, "-"+suffix) {
		n += "-" + suffix
	}
	name := n
	for i := 2; names[name]; i++ {
		name = fmt.Sprintf("%s-%d", n, i)
	}
	names[name] = true
	return name
}

func (p *Proposal) pool(c *class, members []*NodeGroup, ct string, split bool, nodeClass string, names map[string]bool, o Options) *v1alpha1.NodePool {
	suffix := ""
	if split {
		suffix = ct
	}
	name := poolName(c.groups[0].Name, suffix, names)
	var own []string
	for _, g := range members {
		for _, t := range g.InstanceTypes {
			if !slices.Contains(own, t) {
				own = append(own, t)
			}
		}
		p.Notes[name] = append(p.Notes[name], fmt.Sprintf("replaces node group %s (%s; %s; %d to %d nodes)", g.Name, strings.Join(g.InstanceTypes, ", "), strings.Join(g.CapacityTypes, "/"), g.MinSize, g.MaxSize))
		p.Notes[name] = append(p.Notes[name], g.Notes...)
	}
	for _, g := range members {
		for r, q := range g.Resources {
			p.Notes[name] = append(p.Notes[name], fmt.Sprintf("node group %s declares %s: %s (CA's node-template tag); Stowage takes a node's resources from its instance type and the device plugins", g.Name, r, q))
		}
	}
	types, unknown := Diversify(own, o.Catalogue, max(o.MaxTypes, len(own)))
	p.Notes[name] = append(p.Notes[name], fmt.Sprintf("instance types widened from %s to %s (same shape, one size up)", strings.Join(own, ", "), strings.Join(types, ", ")))
	if len(unknown) > 0 {
		p.Notes[name] = append(p.Notes[name], fmt.Sprintf("%s: not in Stowage's built-in catalogue, kept without neighbours", strings.Join(unknown, ", ")))
	}
	np := &v1alpha1.NodePool{TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "NodePool"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
	spec := &np.Spec.Template.Spec
	spec.NodeClassRef = &v1alpha1.NodeClassReference{Group: v1alpha1.Group, Kind: v1alpha1.DefaultNodeClassKind, Name: nodeClass}
	spec.Requirements = append(spec.Requirements,
		requirement(corev1.LabelInstanceTypeStable, types...), requirement(v1alpha1.LabelCapacityType, ct))
	if zones := commonZones(members); len(zones) > 0 {
		spec.Requirements = append(spec.Requirements, requirement(corev1.LabelTopologyZone, zones...))
	}
	p.labels(np, c.groups[0].Labels)
	spec.Taints = slices.Clone(c.groups[0].Taints)
	if split {
		w := map[string]int32{"spot": 100, "on-demand": 10, "reserved": 100}[ct]
		np.Spec.Weight = &w
	}
	np.Spec.Limits = limits(members, o.Catalogue)
	if _, gpu := np.Spec.Limits[resourceGPU]; gpu {
		np.Spec.Disruption.ConsolidationPolicy = v1alpha1.ConsolidationPolicyWhenEmpty
	}
	return np
}

func requirement(key string, values ...string) v1alpha1.NodeSelectorRequirementWithMinValues {
	return v1alpha1.NodeSelectorRequirementWithMinValues{Key: key, Operator: v1alpha1.OperatorIn, Values: values}
}

// labels puts a group's labels on the pool's nodes; a label that Kubernetes,
// EKS or Stowage sets itself becomes a requirement when Stowage knows it, and
// is otherwise left out with a note.
func (p *Proposal) labels(np *v1alpha1.NodePool, labels map[string]string) {
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		v := labels[k]
		switch {
		case !v1alpha1.IsRestrictedLabel(k):
			if np.Spec.Template.ObjectMeta.Labels == nil {
				np.Spec.Template.ObjectMeta.Labels = map[string]string{}
			}
			np.Spec.Template.ObjectMeta.Labels[k] = v
		case !v1alpha1.IsRestrictedRequirementKey(k) && k != v1alpha1.LabelCapacityType && k != corev1.LabelInstanceTypeStable:
			np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, requirement(k, v))
		default:
			p.Notes[np.Name] = append(p.Notes[np.Name], fmt.Sprintf("label %s=%s: not carried over: the node's own (Kubernetes, EKS or Stowage sets it)", k, v))
		}
	}
}

// commonZones are the zones every member names; none when one names none.
func commonZones(members []*NodeGroup) []string {
	var zones []string
	for i, g := range members {
		if len(g.Zones) == 0 {
			return nil
		}
		if i == 0 {
			zones = slices.Clone(g.Zones)
			continue
		}
		zones = slices.DeleteFunc(zones, func(z string) bool { return !slices.Contains(g.Zones, z) })
	}
	sort.Strings(zones)
	return zones
}

// limits caps the pool at what its groups' maximum sizes reach on their
// largest type: CPU, memory and GPUs.
func limits(members []*NodeGroup, infos []catalogue.Info) corev1.ResourceList {
	var cpu, memMiB, gpu int64
	for _, g := range members {
		var c, m, n int64
		for _, t := range g.InstanceTypes {
			if i := slices.IndexFunc(infos, func(x catalogue.Info) bool { return x.Name == t }); i >= 0 {
				c, m, n = max(c, infos[i].VCPU), max(m, infos[i].MemoryMiB), max(n, infos[i].GPUCount)
			}
		}
		cpu, memMiB, gpu = cpu+int64(g.MaxSize)*c, memMiB+int64(g.MaxSize)*m, gpu+int64(g.MaxSize)*n
	}
	if cpu == 0 {
		return nil
	}
	out := corev1.ResourceList{corev1.ResourceCPU: *resource.NewQuantity(cpu, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(memMiB<<20, resource.BinarySI)}
	if gpu > 0 {
		out[resourceGPU] = *resource.NewQuantity(gpu, resource.DecimalSI)
	}
	return out
}

func labelsKey(l map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(l)) {
		parts = append(parts, k+"="+l[k])
	}
	return strings.Join(parts, ",")
}

func taintsKey(ts []corev1.Taint) string {
	var parts []string
	for _, t := range ts {
		parts = append(parts, t.ToString())
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}
