// Package fake is an in-memory CloudProvider for controller tests: it launches
// the cheapest compatible offering, records every call, and fails on demand.
package fake

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

var _ cloudprovider.CloudProvider = (*CloudProvider)(nil)

// CloudProvider is an in-memory cloud. Set its exported fields before use or
// between calls; Reset clears what calls recorded.
type CloudProvider struct {
	mu sync.Mutex
	// Types is what InstanceTypes returns and what Create picks from.
	Types []*cloudprovider.InstanceType
	// NextCreateErr, when set, is returned by the next Create (and then cleared).
	NextCreateErr error
	// NextDeleteErr, when set, is returned by the next Delete (and then cleared).
	NextDeleteErr error
	// Drifted is what IsDrifted returns.
	Drifted cloudprovider.DriftReason
	// CreateCalls, DeleteCalls record the claims passed in, in order.
	CreateCalls []*v1alpha1.NodeClaim
	DeleteCalls []*v1alpha1.NodeClaim
	// Created is provider id -> the claim Create returned, for live instances.
	Created map[string]*v1alpha1.NodeClaim
	nextID  int
}

// New returns a fake cloud offering types.
func New(types ...*cloudprovider.InstanceType) *CloudProvider {
	return &CloudProvider{Types: types, Created: map[string]*v1alpha1.NodeClaim{}}
}

// Reset forgets recorded calls, created instances and queued errors.
func (c *CloudProvider) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.CreateCalls, c.DeleteCalls, c.Created = nil, nil, map[string]*v1alpha1.NodeClaim{}
	c.NextCreateErr, c.NextDeleteErr, c.Drifted = nil, nil, ""
}

// Name returns "fake".
func (c *CloudProvider) Name() string { return "fake" }

// Create launches the cheapest available offering that the claim's requirements
// and resources allow, or returns an InsufficientCapacityError.
func (c *CloudProvider) Create(_ context.Context, claim *v1alpha1.NodeClaim) (*v1alpha1.NodeClaim, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.CreateCalls = append(c.CreateCalls, claim.DeepCopy())
	if err := c.NextCreateErr; err != nil {
		c.NextCreateErr = nil
		return nil, err
	}
	reqs := scheduling.FromAPI(claim.Spec.Requirements)
	requests := scheduling.FromList(claim.Spec.Resources.Requests)
	it, of, ok := cheapest(c.Types, reqs, requests)
	if !ok {
		return nil, cloudprovider.NewInsufficientCapacityError("no compatible offering is available")
	}
	c.nextID++
	out := claim.DeepCopy()
	out.Status.ProviderID = fmt.Sprintf("fake:///%s/i-%08d", of.Zone, c.nextID)
	out.Status.Capacity, out.Status.Allocatable = it.Capacity.List(), it.Allocatable().List()
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	out.Labels[corev1.LabelInstanceTypeStable] = it.Name
	out.Labels[corev1.LabelTopologyZone] = of.Zone
	out.Labels[v1alpha1.LabelCapacityType] = of.CapacityType
	c.Created[out.Status.ProviderID] = out
	return out.DeepCopy(), nil
}

func cheapest(types []*cloudprovider.InstanceType, reqs scheduling.Requirements, requests scheduling.Resources) (*cloudprovider.InstanceType, cloudprovider.Offering, bool) {
	var best *cloudprovider.InstanceType
	var bestOf cloudprovider.Offering
	for _, it := range types {
		if !it.Requirements.Intersects(reqs) || !requests.Fits(it.Allocatable()) {
			continue
		}
		of, ok := it.Offerings.Available().Compatible(reqs).Cheapest()
		if ok && (best == nil || cloudprovider.CompareOfferings(of, bestOf) < 0) {
			best, bestOf = it, of
		}
	}
	return best, bestOf, best != nil
}

// Delete removes the claim's instance; NodeClaimNotFoundError once it is gone.
func (c *CloudProvider) Delete(_ context.Context, claim *v1alpha1.NodeClaim) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.DeleteCalls = append(c.DeleteCalls, claim.DeepCopy())
	if err := c.NextDeleteErr; err != nil {
		c.NextDeleteErr = nil
		return err
	}
	if _, ok := c.Created[claim.Status.ProviderID]; !ok {
		return cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("instance %q does not exist", claim.Status.ProviderID))
	}
	delete(c.Created, claim.Status.ProviderID)
	return nil
}

// Get returns the claim created for providerID.
func (c *CloudProvider) Get(_ context.Context, providerID string) (*v1alpha1.NodeClaim, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	claim, ok := c.Created[providerID]
	if !ok {
		return nil, cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("instance %q does not exist", providerID))
	}
	return claim.DeepCopy(), nil
}

// List returns every live instance's claim.
func (c *CloudProvider) List(context.Context) ([]*v1alpha1.NodeClaim, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*v1alpha1.NodeClaim, 0, len(c.Created))
	for _, claim := range c.Created {
		out = append(out, claim.DeepCopy())
	}
	return out, nil
}

// InstanceTypes returns Types, whatever the pool.
func (c *CloudProvider) InstanceTypes(context.Context, *v1alpha1.NodePool) ([]*cloudprovider.InstanceType, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*cloudprovider.InstanceType(nil), c.Types...), nil
}

// SetDrifted sets what IsDrifted returns, safely while controllers call it.
func (c *CloudProvider) SetDrifted(why cloudprovider.DriftReason) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Drifted = why
}

// IsDrifted returns Drifted.
func (c *CloudProvider) IsDrifted(context.Context, *v1alpha1.NodeClaim) (cloudprovider.DriftReason, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Drifted, nil
}
