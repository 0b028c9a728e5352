package disruption

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
)

// finish deletes the candidates' NodeClaims; the termination controller
// drains each node once its pods have a Ready home elsewhere, and terminates
// it. A candidate whose deletion fails is taken back (unmarked, untainted),
// so that it takes pods again and a later round may retry.
func (q *queue) finish(ctx context.Context, p *pending) error {
	var errs []error
	deleted := 0
	for _, c := range p.cmd.Candidates {
		err := q.writer.DeleteNodeClaim(ctx, c.NodeClaim)
		switch {
		case apierrors.IsNotFound(err):
			continue // already gone; the state forgets it once its informer sees
		case err != nil:
			q.release(ctx, c)
			if !apierrors.IsConflict(err) { // a conflict: the name is another claim's now
				errs = append(errs, fmt.Errorf("deleting nodeclaim %s for disruption command %s: %w", c.NodeClaim.Name, p.cmd.ID, err))
			}
			continue
		}
		deleted++
		Disrupted.WithLabelValues(c.NodePool.Name, p.cmd.Reason).Inc()
		if p.cmd.Reason == v1alpha1.DisruptionReasonFallback {
			Returns.WithLabelValues(c.NodePool.Name, c.Offering.CapacityType, p.cmd.Target.NodePool, p.cmd.Target.CapacityType).Inc()
		}
		publish(q.recorder, disruptingEvents(c, p.cmd)...)
		q.log.Info("disrupting node", "command", p.cmd.ID, "method", p.cmd.Method, "reason", p.cmd.Reason,
			"node", c.Node.Name, "nodeclaim", c.NodeClaim.Name, "nodepool", c.NodePool.Name,
			"instance_id", nodeclaim.InstanceID(c.NodeClaim.Status.ProviderID), "instance_type", c.Offering.InstanceType)
	}
	if deleted == 0 && len(errs) > 0 {
		Commands.WithLabelValues(p.cmd.Method, ResultFailed).Inc()
		return errors.Join(errs...)
	}
	Commands.WithLabelValues(p.cmd.Method, ResultSucceeded).Inc()
	if q.opts.OnRemove != nil {
		q.opts.OnRemove()
	}
	q.bookSavings(p)
	if q.opts.Observer != nil {
		q.opts.Observer.Executed(p.cmd, slices.Clone(p.claims))
	}
	return errors.Join(errs...)
}

// bookSavings adds the command's savings, never negative, to its pools:
// each candidate's price to its own pool, less the replacements' price from
// the replacements' pools.
func (q *queue) bookSavings(p *pending) {
	if p.cmd.Savings <= 0 {
		return
	}
	byPool := map[string]float64{}
	for _, c := range p.cmd.Candidates {
		byPool[c.NodePool.Name] += c.Offering.Price
	}
	for _, nc := range p.cmd.Replacements {
		byPool[nc.NodePool] -= nc.Price()
	}
	for _, pool := range slices.Sorted(maps.Keys(byPool)) {
		if v := byPool[pool]; v > 0 {
			Savings.WithLabelValues(pool, p.cmd.Method).Add(v)
		}
	}
}

// rollback takes the command back: its candidates are unmarked and
// untainted, and the replacements it created are deleted.
func (q *queue) rollback(ctx context.Context, p *pending, why string) error {
	var errs []error
	until := q.clk.Now().Add(q.opts.Consolidation.RecentWindow)
	for _, c := range p.cmd.Candidates {
		errs = append(errs, q.release(ctx, c))
		publish(q.recorder, failedEvents(c, p.cmd, why)...)
		q.cooling[c.Name()] = until
	}
	for _, claim := range p.claims {
		if err := q.writer.DeleteNodeClaim(ctx, claim); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, fmt.Errorf("deleting replacement nodeclaim %s of disruption command %s: %w", claim.Name, p.cmd.ID, err))
		}
	}
	Commands.WithLabelValues(p.cmd.Method, ResultFailed).Inc()
	q.log.Warn("disruption command rolled back", "command", p.cmd.ID, "method", p.cmd.Method, "reason", p.cmd.Reason,
		"nodes", fmt.Sprint(p.cmd.Names()), "replacements", claimNames(p.claims), "why", why)
	return errors.Join(errs...)
}

// release unmarks and untaints a candidate.
func (q *queue) release(ctx context.Context, c *Candidate) error {
	q.cluster.UnmarkForDeletion(c.Name())
	if err := q.writer.SetDisruptedTaint(ctx, c.Node.Name, false); client404(err) != nil {
		return fmt.Errorf("untainting node %s: %w", c.Node.Name, err)
	}
	return nil
}

// Observer is told, as structured data, what the controller did and what
// held it back: the simulator's report reads the method, the nodes, the
// savings and the blockers from it.
type Observer interface {
	// Executed is called once the command's candidates' NodeClaims are
	// deleted, with the replacement claims it launched (Initialized).
	Executed(cmd Command, replacements []*v1alpha1.NodeClaim)
	// Blocked is called when a candidate the method wants is first blocked,
	// or its blocker changes: when the DisruptionBlocked event is published.
	Blocked(method Method, b Blocked)
}

func sortedKeys(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }
