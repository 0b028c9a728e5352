package aws

import (
	"context"
	"slices"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/instance"
	"github.com/stowage-dev/stowage/controller/aws/subnet"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
)

// IsDrifted compares the claim's instance with what its NodeClass resolves to
// now: the image, the subnet and the security groups. The NodeClass's own
// settings are compared by the NodeClaim drift controller, through
// v1alpha1.NodeClassHash recorded at launch.
func (c *CloudProvider) IsDrifted(ctx context.Context, claim *v1alpha1.NodeClaim) (cloudprovider.DriftReason, error) {
	id, err := instance.ParseProviderID(claim.Status.ProviderID)
	if err != nil {
		return "", cloudprovider.NewNodeClaimNotFoundError(err)
	}
	if claim.Spec.NodeClassRef == nil {
		return "", nil
	}
	_, r, err := c.classFor(ctx, claim.Spec.NodeClassRef.Name)
	if err != nil {
		return "", err
	}
	in, err := c.instances.Get(ctx, id)
	if err != nil {
		return "", err
	}
	if !slices.ContainsFunc(r.AMIs, func(a v1alpha1.AMI) bool { return a.ID == in.ImageID }) {
		return cloudprovider.DriftImage, nil
	}
	if !slices.ContainsFunc(r.Subnets, func(s subnet.Subnet) bool { return s.ID == in.SubnetID }) {
		return cloudprovider.DriftSubnet, nil
	}
	want := make([]string, 0, len(r.SecurityGroups))
	for _, g := range r.SecurityGroups {
		want = append(want, g.ID)
	}
	got := slices.Clone(in.SecurityGroups)
	slices.Sort(want)
	slices.Sort(got)
	if len(got) > 0 && !slices.Equal(want, got) {
		return cloudprovider.DriftSecurityGroup, nil
	}
	return "", nil
}
