package nodeclaimtest

import (
	"context"
	"sync"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/cloudprovider/fake"
)

var _ cloudprovider.CloudProvider = (*Cloud)(nil)

// Cloud is the fake cloud with call counts and queued Create errors that a
// test may read and set while controllers call it.
type Cloud struct {
	*fake.CloudProvider

	mu         sync.Mutex
	createErrs []error
	creates    int
	deletes    int
	// holding: Delete accepts terminations and keeps the instances running
	// (shutting down) until HoldDeletes(false).
	holding bool
}

// HoldDeletes makes Delete, while hold is true, accept every termination
// without finishing it, as EC2 does while an instance shuts down.
func (c *Cloud) HoldDeletes(hold bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holding = hold
}

// NewCloud returns a fake cloud offering twenty built-in instance types and
// the first built-in NVIDIA GPU type (so that claims may request nvidia.com/gpu).
func NewCloud() *Cloud {
	infos := catalogue.Builtin()
	offered := append([]catalogue.Info(nil), infos[:20]...)
	for _, info := range infos {
		if info.GPUCount > 0 && info.GPUManufacturer == "nvidia" {
			offered = append(offered, info)
			break
		}
	}
	return &Cloud{CloudProvider: fake.New(catalogue.InstanceTypes(offered, catalogue.DefaultOptions())...)}
}

// FailCreates makes the next len(errs) Create calls return errs, in order.
func (c *Cloud) FailCreates(errs ...error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.createErrs = append(c.createErrs, errs...)
}

// Create returns the next queued error, or launches through the fake.
func (c *Cloud) Create(ctx context.Context, claim *v1alpha1.NodeClaim) (*v1alpha1.NodeClaim, error) {
	c.mu.Lock()
	c.creates++
	if len(c.createErrs) > 0 {
		err := c.createErrs[0]
		c.createErrs = c.createErrs[1:]
		c.mu.Unlock()
		return nil, err
	}
	c.mu.Unlock()
	return c.CloudProvider.Create(ctx, claim)
}

// Delete counts the call and deletes through the fake, unless deletes are held.
func (c *Cloud) Delete(ctx context.Context, claim *v1alpha1.NodeClaim) error {
	c.mu.Lock()
	c.deletes++
	holding := c.holding
	c.mu.Unlock()
	if holding && c.Live(ctx, claim.Status.ProviderID) {
		return nil
	}
	return c.CloudProvider.Delete(ctx, claim)
}

// Creates and Deletes return how many times each was called.
func (c *Cloud) Creates() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.creates
}

// Deletes returns how many times Delete was called.
func (c *Cloud) Deletes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deletes
}

// Live reports whether the instance with the provider id is running.
func (c *Cloud) Live(ctx context.Context, providerID string) bool {
	_, err := c.Get(ctx, providerID)
	return err == nil
}
