// Package cloudprovider is Stowage's only seam to a cloud: the CloudProvider
// interface, the instance-type model the scheduler reads, and the typed errors
// the controllers act on. It imports no cloud SDK.
package cloudprovider

import (
	"context"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// CloudProvider launches, finds and terminates the instances behind NodeClaims.
//
// Every method is safe for concurrent use. Errors follow one contract so that
// the controllers can act on them without knowing the cloud:
//   - *InsufficientCapacityError: no offering the claim allows could be launched
//     right now; the cloud has remembered the short offerings, so the caller
//     retries the same claim later rather than deleting and recreating it.
//   - *NodeClassNotReadyError: the claim's NodeClass has not resolved (subnets,
//     security groups, images, instance profile); retry after it has.
//   - *NodeClaimNotFoundError: the instance does not exist or has terminated.
//   - *CreateError: any other launch failure, with a condition reason and message
//     for the NodeClaim (for example a missing IAM permission).
//
// Any other error is transient (throttling already retried, network) and the
// caller retries with backoff.
type CloudProvider interface {
	// Create launches one instance for the claim, trying the claim's allowed
	// offerings cheapest first and falling back when one is short. It returns a
	// copy of the claim with the status (provider id, image, capacity,
	// allocatable) and the labels of what was launched (instance type, zone,
	// capacity type). A retried Create for the same claim never starts a second
	// instance: it returns the one the first call started.
	Create(ctx context.Context, claim *v1alpha1.NodeClaim) (*v1alpha1.NodeClaim, error)
	// Delete terminates the claim's instance. It is idempotent and returns
	// *NodeClaimNotFoundError once the instance is gone (terminated, or never
	// existed); callers keep calling until it does. A cloud whose reads lag
	// its writes does not report an instance launched moments ago as gone
	// because it cannot see it yet: it returns nil, and terminates the
	// instance on a later call.
	Delete(ctx context.Context, claim *v1alpha1.NodeClaim) error
	// Get returns the claim the cloud knows for a provider id, or
	// *NodeClaimNotFoundError when the instance does not exist or has
	// terminated; an instance this process launched moments ago that the
	// cloud does not show yet is another error, never NodeClaimNotFoundError.
	Get(ctx context.Context, providerID string) (*v1alpha1.NodeClaim, error)
	// List returns a claim for every live instance this cluster owns, including
	// instances no NodeClaim object remembers, so that they can be garbage collected.
	List(ctx context.Context) ([]*v1alpha1.NodeClaim, error)
	// InstanceTypes returns the types a pool may launch, with their offerings
	// (zone, capacity type, price, availability). It never blocks on the cloud's
	// APIs once a first catalogue has been built.
	InstanceTypes(ctx context.Context, pool *v1alpha1.NodePool) ([]*InstanceType, error)
	// IsDrifted says why a claim's instance no longer matches its NodeClass (a
	// new image, other subnets or security groups, a changed class), or "" when
	// it does.
	IsDrifted(ctx context.Context, claim *v1alpha1.NodeClaim) (DriftReason, error)
	// Name names the cloud, e.g. "aws".
	Name() string
}

// DriftReason says why an instance no longer matches its NodeClass; "" means not drifted.
type DriftReason string

// Drift reasons a CloudProvider may report.
const (
	DriftImage          DriftReason = "ImageDrift"
	DriftSubnet         DriftReason = "SubnetDrift"
	DriftSecurityGroup  DriftReason = "SecurityGroupDrift"
	DriftNodeClassHash  DriftReason = "NodeClassDrift"
	DriftInstanceRemote DriftReason = "InstanceDrift"
)
