package disruption

import (
	"context"
	"errors"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// ErrDryRun is DryRunWriter's answer: the disruption was decided, not done.
var ErrDryRun = errors.New("dry run: the nodeclaim was not deleted")

// DryRunWriter is the ClusterWriter of stowage run --dry-run: it deletes
// nothing, and the queue reports what it would have disrupted.
type DryRunWriter struct{}

var _ ClusterWriter = DryRunWriter{}

// DeleteNodeClaim deletes nothing and returns ErrDryRun.
func (DryRunWriter) DeleteNodeClaim(context.Context, *v1alpha1.NodeClaim) error { return ErrDryRun }
