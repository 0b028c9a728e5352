package aws

import (
	"context"
	"slices"
	"sync"
	"time"

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
	if img := claim.Status.ImageID; img != "" && !slices.ContainsFunc(r.AMIs, func(a v1alpha1.AMI) bool { return a.ID == img }) {
		return cloudprovider.DriftImage, nil // the image recorded at launch: no call needed
	}
	in, ok := c.listed.get(id, c.opts.Clock.Now())
	if !ok {
		in, err = c.instances.Get(ctx, id, launchedAt(claim))
		if instance.IsNotVisible(err) {
			return "", nil // a new instance EC2 does not show yet has not drifted
		}
		if err != nil {
			return "", err
		}
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

// listedTTL is how long the last List's view of an instance stands in for a
// DescribeInstances of its own: the garbage collector lists every two
// minutes, and the drift controller checks each claim every five.
const listedTTL = 5 * time.Minute

// listedInstances is the last List's instances by id.
type listedInstances struct {
	mu   sync.Mutex
	at   time.Time
	byID map[string]*instance.Instance
}

func (l *listedInstances) put(ins []*instance.Instance, now time.Time) {
	byID := make(map[string]*instance.Instance, len(ins))
	for _, in := range ins {
		byID[in.ID] = in
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.at, l.byID = now, byID
}

// get returns the instance as the last List saw it, if that was within
// listedTTL; an instance the List did not see is asked for.
func (l *listedInstances) get(id string, now time.Time) (*instance.Instance, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.at) >= listedTTL {
		return nil, false
	}
	in, ok := l.byID[id]
	return in, ok
}
