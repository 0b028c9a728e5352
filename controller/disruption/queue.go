package disruption

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/go-hclog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"

	stowevents "github.com/stowage-dev/stowage/controller/events"
	"github.com/stowage-dev/stowage/controller/state"
)

// queue executes Commands. A deletion needs no replacement, so each
// candidate is marked for deletion in the cluster state (the provisioner
// then puts no pod on it) and its NodeClaim deleted at once; the methods
// that launch replacements first will make this wait for them.
type queue struct {
	cluster  *state.Cluster
	writer   ClusterWriter
	recorder events.EventRecorder
	log      hclog.Logger
}

// execute runs every command, going on past a failed deletion; the error
// joins the failures.
func (q *queue) execute(ctx context.Context, cmds []Command) error {
	var errs []error
	for _, cmd := range cmds {
		for _, c := range cmd.Candidates {
			if err := q.disrupt(ctx, cmd.Reason, c); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// disrupt deletes the candidate's NodeClaim. When the deletion fails the
// mark is lifted, so that the node takes pods again and a later round may
// retry.
func (q *queue) disrupt(ctx context.Context, reason string, c *Candidate) error {
	claim := c.NodeClaim
	q.cluster.MarkForDeletion(claim.Name)
	err := q.writer.DeleteNodeClaim(ctx, claim)
	switch {
	case apierrors.IsNotFound(err):
		return nil // already gone; the state forgets it once its informer sees
	case apierrors.IsConflict(err):
		q.cluster.UnmarkForDeletion(claim.Name) // the name is another claim's now
		return nil
	case errors.Is(err, ErrDryRun):
		q.cluster.UnmarkForDeletion(claim.Name)
		q.log.Info("dry run: would disrupt node", "node", c.Node.Name, "nodeclaim", claim.Name, "nodepool", c.NodePool.Name, "reason", reason)
		return nil
	case err != nil:
		q.cluster.UnmarkForDeletion(claim.Name)
		return fmt.Errorf("deleting nodeclaim %s: %w", claim.Name, err)
	}
	Disrupted.WithLabelValues(c.NodePool.Name, reason).Inc()
	stowevents.Publish(q.recorder, disruptingEvents(c, reason)...)
	q.log.Info("disrupting node", "node", c.Node.Name, "nodeclaim", claim.Name, "nodepool", c.NodePool.Name, "reason", reason)
	return nil
}
