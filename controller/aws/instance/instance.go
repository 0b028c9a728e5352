// Package instance launches EC2 instances with instant CreateFleet calls and
// finds, lists and terminates them by the tags Stowage puts on them.
package instance

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"k8s.io/utils/clock"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/awserrors"
	"github.com/stowage-dev/stowage/controller/aws/sdk"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
)

// Tags Stowage puts on every instance.
const (
	TagNodePool  = v1alpha1.LabelNodePool
	TagNodeClaim = v1alpha1.LabelNodeClaim
	TagNodeClass = v1alpha1.LabelNodeClass
	TagName      = "Name"
)

// ClusterTag is the ownership tag key of a cluster.
func ClusterTag(cluster string) string { return "kubernetes.io/cluster/" + cluster }

// Instance is what Stowage needs to know about an EC2 instance.
type Instance struct {
	ID             string
	Type           string
	Zone           string
	SubnetID       string
	CapacityType   string
	ImageID        string
	SecurityGroups []string
	State          string
	LaunchTime     time.Time
	Tags           map[string]string
	// ReservationID is the Capacity Reservation the instance runs in, if any.
	ReservationID string
}

// Provider talks to EC2 about instances.
type Provider struct {
	ec2     sdk.EC2API
	cluster string
	clk     clock.Clock
	// window is how long after a launch EC2's NotFound is not taken for gone (recent.go).
	window time.Duration
	// unfilled are the claims' fleets that launched nothing (refills.go).
	unfilled refills
	// recent are the launches of the last window (recent.go).
	recent recentLaunches
}

// NewProvider returns an instance provider for a cluster; window is its
// consistency window, DefaultConsistencyWindow when zero.
func NewProvider(ec2API sdk.EC2API, cluster string, clk clock.Clock, window time.Duration) *Provider {
	if window <= 0 {
		window = DefaultConsistencyWindow
	}
	return &Provider{ec2: ec2API, cluster: cluster, clk: clk, window: window,
		unfilled: refills{counts: map[string]int{}}, recent: newRecentLaunches()}
}

// ParseProviderID returns the instance id of aws:///<zone>/<instance-id>.
func ParseProviderID(providerID string) (string, error) {
	rest, ok := strings.CutPrefix(providerID, "aws:///")
	i := strings.LastIndex(rest, "/")
	if !ok || i < 0 || !strings.HasPrefix(rest[i+1:], "i-") {
		return "", fmt.Errorf("parsing provider id %q: want aws:///<zone>/<instance-id>", providerID)
	}
	return rest[i+1:], nil
}

// ProviderID formats an instance's provider id.
func ProviderID(zone, id string) string { return "aws:///" + zone + "/" + id }

// Get returns a live instance, or a NodeClaimNotFoundError when it does not
// exist or has terminated. launched is when the caller knows the instance
// was launched (zero when it does not): EC2's NotFound for an instance
// launched less than the consistency window ago, then or by this process,
// is a NotVisibleError instead, as the instance may be running.
func (p *Provider) Get(ctx context.Context, id string, launched time.Time) (*Instance, error) {
	out, err := p.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if awserrors.IsNotFound(err) {
		return nil, p.unknown(id, launched, fmt.Errorf("instance %s: %w", id, err))
	}
	if err != nil {
		return nil, fmt.Errorf("describing instance %s: %w", id, err)
	}
	for _, r := range out.Reservations {
		if len(r.Instances) == 0 {
			continue
		}
		in := fromEC2(&r.Instances[0])
		if in.State == string(ec2types.InstanceStateNameTerminated) {
			return nil, cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("instance %s is terminated", id))
		}
		return in, nil
	}
	return nil, p.unknown(id, launched, fmt.Errorf("instance %s not found", id))
}

// List returns every instance this cluster owns that is not terminated.
func (p *Provider) List(ctx context.Context, extra ...ec2types.Filter) ([]*Instance, error) {
	filters := append([]ec2types.Filter{
		{Name: aws.String("tag:" + ClusterTag(p.cluster)), Values: []string{"owned"}},
		{Name: aws.String("tag-key"), Values: []string{TagNodePool}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running", "stopping", "stopped", "shutting-down"}},
	}, extra...)
	var out []*Instance
	pager := ec2.NewDescribeInstancesPaginator(p.ec2, &ec2.DescribeInstancesInput{Filters: filters, MaxResults: aws.Int32(1000)})
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describing instances: %w", err)
		}
		for _, r := range page.Reservations {
			for i := range r.Instances {
				out = append(out, fromEC2(&r.Instances[i]))
			}
		}
	}
	return out, nil
}

// FindByClaim returns the live instance launched for a claim, if any: the
// one EC2 lists, or the one this process launched for it less than the
// consistency window ago, which EC2 may not list yet.
func (p *Provider) FindByClaim(ctx context.Context, claim string) (*Instance, bool, error) {
	ins, err := p.List(ctx, ec2types.Filter{Name: aws.String("tag:" + TagNodeClaim), Values: []string{claim}})
	if err != nil {
		return nil, false, err
	}
	if len(ins) == 0 {
		in, ok := p.recent.forClaim(claim, p.clk.Now(), p.window)
		return in, ok, nil
	}
	return ins[0], true, nil
}

// Terminate terminates an instance; it returns NodeClaimNotFoundError when the
// instance no longer exists, and, like Get, NotVisibleError for a NotFound
// within the consistency window of its launch.
func (p *Provider) Terminate(ctx context.Context, id string, launched time.Time) error {
	_, err := p.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}})
	if awserrors.IsNotFound(err) {
		return p.unknown(id, launched, fmt.Errorf("terminating instance %s: %w", id, err))
	}
	if err != nil {
		return fmt.Errorf("terminating instance %s: %w", id, err)
	}
	return nil
}

func fromEC2(i *ec2types.Instance) *Instance {
	in := &Instance{ID: aws.ToString(i.InstanceId), Type: string(i.InstanceType), SubnetID: aws.ToString(i.SubnetId),
		ImageID: aws.ToString(i.ImageId), LaunchTime: aws.ToTime(i.LaunchTime), Tags: map[string]string{},
		CapacityType: v1alpha1.CapacityTypeOnDemand}
	if i.Placement != nil {
		in.Zone = aws.ToString(i.Placement.AvailabilityZone)
	}
	if i.State != nil {
		in.State = string(i.State.Name)
	}
	switch {
	case i.InstanceLifecycle == ec2types.InstanceLifecycleTypeSpot:
		in.CapacityType = v1alpha1.CapacityTypeSpot
	case i.CapacityReservationId != nil || i.InstanceLifecycle == ec2types.InstanceLifecycleTypeCapacityBlock:
		in.CapacityType, in.ReservationID = v1alpha1.CapacityTypeReserved, aws.ToString(i.CapacityReservationId)
	}
	for _, g := range i.SecurityGroups {
		in.SecurityGroups = append(in.SecurityGroups, aws.ToString(g.GroupId))
	}
	for _, t := range i.Tags {
		in.Tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return in
}

// ClientToken derives CreateFleet's idempotency token from the claim name and
// what the call asks for (the offerings, and how many of the claim's fleets
// launched nothing before): a retried identical call returns the instance the
// first one started, while a call with other offerings, or after a fleet that
// found no capacity, is a new request.
func ClientToken(claim string, fingerprint string) string {
	sum := sha256.Sum256([]byte(claim + "\x00" + fingerprint))
	return "stowage-" + hex.EncodeToString(sum[:24])
}
