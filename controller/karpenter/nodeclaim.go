package karpenter

import (
	"maps"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// nodeClaim converts a NodeClaim Karpenter launched into Stowage's form, so
// that a snapshot counts it as capacity that exists or is on its way: its
// pool label and requirement keys become Stowage's, its status is kept.
func (c *converter) nodeClaim() error {
	var in NodeClaim
	if err := c.decode(&in); err != nil {
		return err
	}
	out := &v1alpha1.NodeClaim{ObjectMeta: c.meta(in.ObjectMeta)}
	out.APIVersion, out.Kind = v1alpha1.SchemeGroupVersion.String(), "NodeClaim"
	out.Labels = claimLabels(in.Labels)
	out.DeletionTimestamp = in.DeletionTimestamp
	s := in.Spec
	out.Spec = v1alpha1.NodeClaimSpec{
		Requirements: c.requirements("spec.requirements", s.Requirements),
		Taints:       s.Taints, StartupTaints: s.StartupTaints,
		NodeClassRef: c.nodeClassRef("spec.nodeClassRef", s.NodeClassRef),
		ExpireAfter:  s.ExpireAfter, TerminationGracePeriod: s.TerminationGracePeriod,
	}
	if s.Resources != nil {
		out.Spec.Resources.Requests = s.Resources.Requests
	}
	st := in.Status
	out.Status = v1alpha1.NodeClaimStatus{NodeName: st.NodeName, ProviderID: st.ProviderID, ImageID: st.ImageID,
		Capacity: st.Capacity, Allocatable: st.Allocatable, Conditions: st.Conditions, LastPodEventTime: st.LastPodEventTime}
	c.out.NodeClaim = out
	return nil
}

// claimLabels renames Karpenter's pool and class labels, and its selector
// labels, to Stowage's.
func claimLabels(in map[string]string) map[string]string {
	if in == nil {
		return nil
	}
	out := maps.Clone(in)
	for from, to := range map[string]string{v1alpha1.KarpenterLabelNodePool: v1alpha1.LabelNodePool, v1alpha1.KarpenterLabelNodeClass: v1alpha1.LabelNodeClass} {
		if v, ok := in[from]; ok {
			delete(out, from)
			out[to] = v
		}
	}
	return v1alpha1.WithStowageLabels(out)
}
