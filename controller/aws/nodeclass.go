package aws

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/amifamily"
	"github.com/stowage-dev/stowage/controller/aws/awserrors"
	"github.com/stowage-dev/stowage/controller/aws/launchtemplate"
	"github.com/stowage-dev/stowage/controller/aws/subnet"
)

// NodeClasses finds NodeClass objects by name (an informer cache in the
// controller, a map in tests).
type NodeClasses interface {
	NodeClass(ctx context.Context, name string) (*v1alpha1.NodeClass, error)
}

// StaticNodeClasses serves NodeClasses from a map.
type StaticNodeClasses map[string]*v1alpha1.NodeClass

// NodeClass returns the named class or an error.
func (s StaticNodeClasses) NodeClass(_ context.Context, name string) (*v1alpha1.NodeClass, error) {
	nc, ok := s[name]
	if !ok {
		return nil, fmt.Errorf("getting nodeclass %s: not found", name)
	}
	return nc, nil
}

// Resolved is what a NodeClass's selectors resolve to.
type Resolved struct {
	Subnets         []subnet.Subnet
	SecurityGroups  []v1alpha1.SecurityGroup
	AMIs            []v1alpha1.AMI
	InstanceProfile string
	// Reservations are the capacity reservations the class selects; reserved
	// offerings exist for these only.
	Reservations []v1alpha1.CapacityReservation
	Hash         string
	at           time.Time
}

// Hash is a stable digest of a NodeClass's whole spec, the key of the
// resolution cache: any change to the class resolves it again. Drift compares
// v1alpha1.NodeClassHash instead, which leaves out what the cloud compares
// with the running instance.
func Hash(nc *v1alpha1.NodeClass) string {
	b, _ := json.Marshal(nc.Spec) //nolint:errchkjson // API types encode
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

type resolvedCache struct {
	mu sync.Mutex
	m  map[string]*Resolved // nodeclass name -> resolution
}

// Resolve resolves a NodeClass, reusing a resolution of the same spec younger
// than Options.ResolveTTL.
func (c *CloudProvider) Resolve(ctx context.Context, nc *v1alpha1.NodeClass) (*Resolved, error) {
	hash := Hash(nc)
	c.resolved.mu.Lock()
	r, ok := c.resolved.m[nc.Name]
	c.resolved.mu.Unlock()
	if ok && r.Hash == hash && c.opts.Clock.Since(r.at) < c.opts.ResolveTTL {
		return r, nil
	}
	r, err := c.resolve(ctx, nc)
	if err != nil {
		return nil, err
	}
	r.Hash, r.at = hash, c.opts.Clock.Now()
	c.resolved.mu.Lock()
	c.resolved.m[nc.Name] = r
	c.resolved.mu.Unlock()
	return r, nil
}

func (c *CloudProvider) resolve(ctx context.Context, nc *v1alpha1.NodeClass) (*Resolved, error) {
	var r Resolved
	var err error
	if r.Subnets, err = c.subnets.Resolve(ctx, nc.Spec.SubnetSelectorTerms); err != nil {
		return nil, err
	}
	if len(r.Subnets) == 0 {
		return nil, fmt.Errorf("resolving subnets: no subnet matches the subnetSelectorTerms")
	}
	if r.SecurityGroups, err = c.sgs.Resolve(ctx, nc.Spec.SecurityGroupSelectorTerms); err != nil {
		return nil, err
	}
	if len(r.SecurityGroups) == 0 {
		return nil, fmt.Errorf("resolving security groups: no security group matches the securityGroupSelectorTerms")
	}
	if r.AMIs, err = c.amis.Resolve(ctx, nc.Spec.AMISelectorTerms); err != nil {
		return nil, err
	}
	if r.Reservations, err = c.reservations.Resolve(ctx, nc.Spec.CapacityReservationSelectorTerms); err != nil {
		return nil, err
	}
	if nc.Spec.InstanceProfile != nil {
		r.InstanceProfile, err = c.profiles.Existing(ctx, *nc.Spec.InstanceProfile)
	} else {
		r.InstanceProfile, err = c.profiles.ForRole(ctx, nc.Spec.Role)
	}
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// Status reports a NodeClass's resolution as its status: what resolved, and a
// Ready condition whose message names the failure (for authorisation failures,
// the missing IAM action).
func (c *CloudProvider) Status(ctx context.Context, nc *v1alpha1.NodeClass) v1alpha1.NodeClassStatus {
	cond := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Resolved",
		LastTransitionTime: metav1.NewTime(c.opts.Clock.Now()), ObservedGeneration: nc.Generation}
	r, err := c.Resolve(ctx, nc)
	if err != nil {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "ResolutionFailed", err.Error()
		if ue, ok := awserrors.AsUnauthorized(err); ok {
			cond.Reason, cond.Message = ue.Reason(), ue.Message()
		}
		return v1alpha1.NodeClassStatus{Conditions: []metav1.Condition{cond}}
	}
	if _, err := c.ReplacedUserData(nc); err != nil {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "UserDataInvalid", err.Error()
	}
	st := v1alpha1.NodeClassStatus{SecurityGroups: r.SecurityGroups, AMIs: r.AMIs, InstanceProfile: r.InstanceProfile,
		CapacityReservations: r.Reservations, Conditions: []metav1.Condition{cond}}
	for _, s := range r.Subnets {
		st.Subnets = append(st.Subnets, v1alpha1.Subnet{ID: s.ID, Zone: s.Zone, ZoneID: s.ZoneID})
	}
	return st
}

// ReplacedUserData names the settings of the NodeClass's userData that
// Stowage's own replace on every node of the class (the cluster's, and the
// kubelet block's; a pool's labels and taints may replace more); the error
// says why the userData cannot be read.
func (c *CloudProvider) ReplacedUserData(nc *v1alpha1.NodeClass) ([]string, error) {
	r, err := amifamily.Render(amifamily.Family(nc), bootstrap(c.opts.Cluster, nc))
	return r.Replaced, err
}

// LaunchTemplate is the launch template a claim of the NodeClass launches
// from with an image (the user data included), as a launch ensures it, for
// `stowage render`: the selectors are not resolved, so it names no
// security group or instance profile.
func (c *CloudProvider) LaunchTemplate(claim *v1alpha1.NodeClaim, nc *v1alpha1.NodeClass, imageID string) (launchtemplate.Config, error) {
	return c.templateConfig(claim, nc, &Resolved{}, imageID, "")
}

// ephemeralVolumeGiB is the size of the volume that holds the node's ephemeral
// storage, from the NodeClass's block device mappings: the one marked
// rootVolume, else the AMI family's device for it (/dev/xvda on AL2023, the
// data volume /dev/xvdb on Bottlerocket). 0 means the catalogue default, the
// size the AMI gives its volume.
func ephemeralVolumeGiB(nc *v1alpha1.NodeClass) int64 {
	device := map[string]string{amifamily.FamilyAL2023: "/dev/xvda", amifamily.FamilyBottlerocket: "/dev/xvdb"}[amifamily.Family(nc)]
	var size int64
	for _, b := range nc.Spec.BlockDeviceMappings {
		if b.EBS == nil {
			continue
		}
		if b.RootVolume {
			return launchtemplate.VolumeGiB(b.EBS.VolumeSize)
		}
		if b.DeviceName != nil && *b.DeviceName == device {
			size = launchtemplate.VolumeGiB(b.EBS.VolumeSize)
		}
	}
	return size
}
