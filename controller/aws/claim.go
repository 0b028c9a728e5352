package aws

import (
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/instance"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
)

// claimFromInstance describes an instance as a NodeClaim, from its tags.
func (c *CloudProvider) claimFromInstance(in *instance.Instance) *v1alpha1.NodeClaim {
	claim := &v1alpha1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:              in.Tags[instance.TagNodeClaim],
			CreationTimestamp: metav1.NewTime(in.LaunchTime),
			Labels: map[string]string{
				corev1.LabelInstanceTypeStable: in.Type,
				corev1.LabelTopologyZone:       in.Zone,
				v1alpha1.LabelCapacityType:     in.CapacityType,
			},
			Annotations: map[string]string{},
		},
	}
	if pool := in.Tags[instance.TagNodePool]; pool != "" {
		claim.Labels[v1alpha1.LabelNodePool] = pool
	}
	if h := in.Tags[v1alpha1.AnnotationNodeClassHash]; h != "" {
		claim.Annotations[v1alpha1.AnnotationNodeClassHash] = h
		claim.Annotations[v1alpha1.AnnotationHashVersion] = v1alpha1.HashVersion
	}
	if nc := in.Tags[instance.TagNodeClass]; nc != "" {
		claim.Spec.NodeClassRef = &v1alpha1.NodeClassReference{Group: v1alpha1.Group, Kind: "NodeClass", Name: nc}
	}
	c.labelReservation(claim, in)
	claim.Status.ProviderID = instance.ProviderID(in.Zone, in.ID)
	claim.Status.ImageID = in.ImageID
	return claim
}

// launched fills a copy of the claim with what was launched: the instance's
// labels (type, zone, capacity type and the type's attributes), and, unless
// NoKarpenterLabels, Karpenter's copies of them, so that workloads selecting
// on Karpenter's keys keep scheduling on Stowage's nodes. Karpenter's
// ownership markers (karpenter.sh/nodepool, registered, initialized) are never
// among them: a Karpenter running beside Stowage leaves these nodes alone. It
// records the NodeClass hash (v1alpha1.NodeClassHash, the digest the drift
// controller and the Terraform provider compare) of the class it was launched
// with.
func (c *CloudProvider) launched(claim *v1alpha1.NodeClaim, in *instance.Instance, it *cloudprovider.InstanceType, imageID, hash string) *v1alpha1.NodeClaim {
	out := claim.DeepCopy()
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	if it != nil {
		for k, v := range it.Requirements.Labels() {
			out.Labels[k] = v
		}
		out.Status.Capacity = it.Capacity.List()
		out.Status.Allocatable = it.Allocatable().List()
	}
	out.Labels[corev1.LabelInstanceTypeStable] = in.Type
	out.Labels[corev1.LabelTopologyZone] = in.Zone
	out.Labels[v1alpha1.LabelCapacityType] = in.CapacityType
	if !c.opts.NoKarpenterLabels {
		maps.Copy(out.Labels, v1alpha1.KarpenterSelectorLabels(out.Labels))
	}
	out.Annotations[v1alpha1.AnnotationNodeClassHash] = hash
	out.Annotations[v1alpha1.AnnotationHashVersion] = v1alpha1.HashVersion
	c.labelReservation(out, in)
	out.Status.ProviderID = instance.ProviderID(in.Zone, in.ID)
	out.Status.ImageID = imageID
	return out
}

// labelReservation records the capacity reservation an instance runs in:
// its id and type as labels the node carries (the Lambda finds a Capacity
// Block's nodes by them), and a block's end, which the capacity block
// controller replaces the node ahead of.
func (c *CloudProvider) labelReservation(claim *v1alpha1.NodeClaim, in *instance.Instance) {
	if in.ReservationID == "" {
		return
	}
	claim.Labels[v1alpha1.LabelCapacityReservationID] = in.ReservationID
	r, ok := c.reservations.Get(in.ReservationID)
	if !ok {
		return
	}
	claim.Labels[v1alpha1.LabelCapacityReservationType] = r.Type
	if !r.End.IsZero() {
		claim.Annotations[v1alpha1.AnnotationCapacityReservationEnd] = r.End.UTC().Format(time.RFC3339)
	}
}
