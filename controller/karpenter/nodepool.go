package karpenter

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// DefaultNodeClassName is the NodeClass a NodePool without a nodeClassRef
// (a documentation fragment) is given.
const DefaultNodeClassName = "default"

func (c *converter) nodePool() error {
	var in NodePool
	if err := c.decode(&in); err != nil {
		return err
	}
	out := &v1alpha1.NodePool{ObjectMeta: c.meta(in.ObjectMeta)}
	out.APIVersion, out.Kind = v1alpha1.SchemeGroupVersion.String(), "NodePool"
	spec := &out.Spec
	spec.Template.ObjectMeta = v1alpha1.TemplateObjectMeta{Labels: in.Spec.Template.ObjectMeta.Labels, Annotations: in.Spec.Template.ObjectMeta.Annotations}
	t := in.Spec.Template.Spec
	spec.Template.Spec = v1alpha1.NodeClaimTemplateSpec{
		Requirements: c.requirements("spec.template.spec.requirements", t.Requirements),
		Taints:       t.Taints, StartupTaints: t.StartupTaints,
		NodeClassRef: c.nodeClassRef("spec.template.spec.nodeClassRef", t.NodeClassRef),
		ExpireAfter:  t.ExpireAfter, TerminationGracePeriod: t.TerminationGracePeriod,
	}
	if t.Resources != nil {
		c.note("spec.template.spec.resources", valueOf(t.Resources), "not converted: a template does not set resources; Stowage sizes each NodeClaim for its pods")
	}
	if d := in.Spec.Disruption; d != nil {
		// Karpenter's policies are Stowage's, Balanced (1.14) included, with
		// the same BalancedK.
		spec.Disruption = v1alpha1.Disruption{ConsolidationPolicy: d.ConsolidationPolicy, ConsolidateAfter: d.ConsolidateAfter, Budgets: d.Budgets}
	}
	spec.Limits, spec.Weight = in.Spec.Limits, in.Spec.Weight
	if in.Spec.Replicas != nil {
		c.staticPool(spec, *in.Spec.Replicas)
	}
	if len(in.Status) > 0 {
		c.quiet("status", "not converted: the status is what Karpenter observed")
	}
	c.placeholders(out)
	if len(c.refusals) == 0 {
		defaulted := out.DeepCopy()
		defaulted.SetDefaults()
		c.validate(defaulted.Validate())
	}
	c.out.NodePool = out
	return nil
}

// requirements keeps a template's (or claim's) requirements, with Karpenter's
// well-known keys written as Stowage's, and leaves out, with a note, those on
// Karpenter labels Stowage has no value for.
func (c *converter) requirements(path string, in []v1alpha1.NodeSelectorRequirementWithMinValues) []v1alpha1.NodeSelectorRequirementWithMinValues {
	var out []v1alpha1.NodeSelectorRequirementWithMinValues
	for i, r := range in {
		field := fmt.Sprintf("%s[%d]", path, i)
		if r.Key == v1alpha1.KarpenterLabelNodePool && path == "spec.requirements" {
			r.Key = v1alpha1.LabelNodePool // a claim names its pool, as Stowage's claims do
		}
		if why := v1alpha1.KarpenterLabelsWithoutEquivalent[r.Key]; why != "" {
			c.note(field, valueOf(r), "not converted: %s is a Karpenter label Stowage has no value for (%s); the pool is less constrained without it", r.Key, why)
			continue
		}
		if r.Key == corev1.LabelOSStable && !scheduling.FromAPI([]v1alpha1.NodeSelectorRequirementWithMinValues{r}).Get(r.Key).Has(string(corev1.Linux)) {
			c.refuse(field, "the pool allows no Linux nodes (%s %s %v): Windows nodes are not supported; keep Windows pools on Karpenter", r.Key, r.Operator, r.Values)
		}
		r.Key = v1alpha1.CanonicalLabelKey(r.Key)
		out = append(out, r)
	}
	return out
}

// nodeClassRef points at the Stowage NodeClass the EC2NodeClass becomes.
func (c *converter) nodeClassRef(path string, in *NodeClassReference) *v1alpha1.NodeClassReference {
	out := &v1alpha1.NodeClassReference{Group: v1alpha1.Group, Kind: v1alpha1.DefaultNodeClassKind, Name: DefaultNodeClassName}
	switch {
	case in == nil || in.Name == "":
		c.note(path, "", "no nodeClassRef (Karpenter v1 requires one): the pool uses the NodeClass %q; convert or write a NodeClass of that name, or fix the reference", DefaultNodeClassName)
		return out
	case in.Kind != "" && in.Kind != "EC2NodeClass":
		c.refuse(path+".kind", "%s is not an EC2NodeClass: Stowage's NodeClass stands for EC2NodeClass only", in.Kind)
	case in.Group != "" && in.Group != v1alpha1.KarpenterAWSGroup:
		c.note(path+".group", in.Group, "read %q as %s, EC2NodeClass's group; the reference now names Stowage's NodeClass", in.Group, v1alpha1.KarpenterAWSGroup)
	}
	out.Name = in.Name
	return out
}

// staticPool converts a static NodePool's replicas to a floor and a ceiling
// of that many nodes: minNodes and limits.nodes (a lower nodes limit the pool
// already has stays, and is the floor too).
func (c *converter) staticPool(spec *v1alpha1.NodePoolSpec, replicas int64) {
	if replicas < 0 || replicas > 1000 {
		c.refuse("spec.replicas", "%d nodes: a pool's minNodes is between 0 and 1000", replicas)
		return
	}
	n := replicas
	if q, ok := spec.Limits[corev1.ResourceName("nodes")]; ok && q.Value() < n {
		n = q.Value()
	}
	floor := int32(n)
	spec.MinNodes = &floor
	spec.Limits = spec.Limits.DeepCopy()
	if spec.Limits == nil {
		spec.Limits = corev1.ResourceList{}
	}
	spec.Limits["nodes"] = *resource.NewQuantity(n, resource.DecimalSI)
	c.note("spec.replicas", valueOf(replicas), "converted to minNodes %d and limits.nodes %d: Stowage keeps that many nodes whatever the load and launches none beyond them, packing pending pods onto them", n, n)
}
