package disruption

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowevents "github.com/stowage-dev/stowage/controller/events"
	"github.com/stowage-dev/stowage/controller/provisioning"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/state"
)

// stage is where a command stands in the queue.
type stage int

const (
	// validating: decided, waiting out the validation delay.
	validating stage = iota
	// launching: candidates tainted and marked, replacements launched,
	// waiting for them to be Initialized.
	launching
)

// pending is a command the controller has decided and not finished.
type pending struct {
	cmd   Command
	stage stage
	// due is when a validating command is checked again, and when a
	// launching one gives up on its replacements.
	due time.Time
	// claims are the replacement claims created, in the command's order.
	claims []*v1alpha1.NodeClaim
}

// queue executes commands: replacements first, then the candidates' NodeClaims.
type queue struct {
	clk      clock.PassiveClock
	cluster  *state.Cluster
	writer   ClusterWriter
	recorder events.EventRecorder
	log      hclog.Logger
	newID    func() string
	opts     Options
	pending  []*pending
	// cooling is node name -> until when consolidation leaves it alone: a
	// command for it rolled back, and trying again at once would likely
	// fail the same way (a short offering, say).
	cooling map[string]time.Time
}

// busy names the nodes of every pending command.
func (q *queue) busy() map[string]bool {
	out := map[string]bool{}
	for _, p := range q.pending {
		for _, c := range p.cmd.Candidates {
			out[c.Name()] = true
		}
	}
	return out
}

// holds reports whether a pending command of method class consolidation (a
// Validator) is still validating or launching: no consolidation is decided
// until it is done, so that two commands never count on the same free room.
func (q *queue) holds() bool {
	for _, p := range q.pending {
		if p.stage == validating || len(p.cmd.Replacements) > 0 {
			return true
		}
	}
	return false
}

// add queues cmd: a Validator's command is validated after the delay,
// anything else starts at once.
func (q *queue) add(ctx context.Context, m Method, cmd Command) error {
	if q.opts.DryRun {
		q.log.Info("dry run: would start disruption command", "command", cmd.ID, "method", cmd.Method, "reason", cmd.Reason,
			"action", cmd.Action(), "nodes", strings.Join(cmd.Names(), ","), "savings_per_hour", fmt.Sprintf("%.4f", cmd.Savings))
		return nil
	}
	if _, ok := m.(Validator); ok && q.opts.ValidationDelay > 0 {
		q.pending = append(q.pending, &pending{cmd: cmd, stage: validating, due: q.clk.Now().Add(q.opts.ValidationDelay)})
		q.log.Debug("validating disruption command", "command", cmd.ID, "method", cmd.Method, "nodes", strings.Join(cmd.Names(), ","))
		return nil
	}
	return q.start(ctx, &pending{cmd: cmd})
}

// start launches the command's replacements, then taints and marks its
// candidates, and deletes the candidates at once when there is nothing to
// wait for. A replacement
// that cannot be created rolls the command back.
func (q *queue) start(ctx context.Context, p *pending) error {
	for _, nc := range p.cmd.Replacements {
		claim, err := q.createReplacement(ctx, p.cmd, nc)
		if err != nil {
			return errors.Join(err, q.rollback(ctx, p, "creating a replacement failed: "+err.Error()))
		}
		p.claims = append(p.claims, claim)
	}
	names := p.cmd.Names()
	q.cluster.MarkForDeletion(names...)
	for _, c := range p.cmd.Candidates {
		if err := q.writer.SetDisruptedTaint(ctx, c.Node.Name, true); client404(err) != nil {
			return errors.Join(err, q.rollback(ctx, p, "tainting the node failed: "+err.Error()))
		}
	}
	Commands.WithLabelValues(p.cmd.Method, ResultStarted).Inc()
	q.log.Info("disruption command started", "command", p.cmd.ID, "method", p.cmd.Method, "reason", p.cmd.Reason,
		"action", p.cmd.Action(), "nodes", strings.Join(names, ","), "replacements", claimNames(p.claims),
		"savings_per_hour", fmt.Sprintf("%.4f", p.cmd.Savings), "why", p.cmd.Why)
	if len(p.claims) == 0 {
		return q.finish(ctx, p)
	}
	p.stage, p.due = launching, q.clk.Now().Add(q.opts.ReplacementTimeout)
	q.pending = append(q.pending, p)
	return nil
}

// createReplacement creates the claim for nc as the provisioner would, noting
// the command that launched it and the instance types it replaces.
func (q *queue) createReplacement(ctx context.Context, cmd Command, nc *scheduler.NewNodeClaim) (*v1alpha1.NodeClaim, error) {
	pool := q.poolNamed(nc.NodePool)
	if pool == nil {
		return nil, fmt.Errorf("nodepool %s of a replacement is gone", nc.NodePool)
	}
	claim := provisioning.NodeClaimFor(nc, pool)
	if claim.Annotations == nil {
		claim.Annotations = map[string]string{}
	}
	claim.Annotations[v1alpha1.AnnotationDisruptionCommand] = cmd.ID
	claim.Annotations[v1alpha1.AnnotationDisruptionReason] = cmd.Reason
	claim.Annotations[v1alpha1.AnnotationReplacedInstanceTypes] = strings.Join(sortedKeys(historyTypes(cmd.Candidates)), ",")
	var err error
	for range 3 {
		claim.Name = nc.NodePool + "-" + q.newID()
		var created *v1alpha1.NodeClaim
		if created, err = q.writer.CreateNodeClaim(ctx, claim); err == nil {
			q.cluster.NodeClaimCreated(created)
			return created, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			break
		}
	}
	return nil, fmt.Errorf("creating a replacement nodeclaim for nodepool %s: %w", nc.NodePool, err)
}

func (q *queue) poolNamed(name string) *v1alpha1.NodePool {
	for _, np := range q.cluster.NodePools() {
		if np.Name == name {
			return np
		}
	}
	return nil
}

// progress moves every launching command on: its candidates are deleted once
// every replacement is Initialized; it is rolled back when a replacement is
// gone (its launch failed and its claim was deleted) or the timeout passed.
func (q *queue) progress(ctx context.Context, snap *scheduler.Snapshot) error {
	claims := map[string]*v1alpha1.NodeClaim{}
	for _, sn := range snap.Nodes {
		if sn.NodeClaim != nil {
			claims[sn.NodeClaim.Name] = sn.NodeClaim
		}
	}
	var errs []error
	for _, p := range q.take(launching) {
		switch why := q.waiting(p, claims); {
		case why == "":
			for i, created := range p.claims {
				p.claims[i] = claims[created.Name] // as launched: the observer reads its instance
			}
			errs = append(errs, q.finish(ctx, p))
		case !q.clk.Now().Before(p.due) || strings.HasPrefix(why, "gone:"):
			errs = append(errs, q.rollback(ctx, p, strings.TrimPrefix(why, "gone: ")))
		default:
			q.pending = append(q.pending, p)
		}
	}
	return errors.Join(errs...)
}

// waiting returns what the command still waits for ("" for nothing): a
// replacement not yet Initialized, or, prefixed "gone: ", one that is gone.
func (q *queue) waiting(p *pending, claims map[string]*v1alpha1.NodeClaim) string {
	for _, created := range p.claims {
		claim, ok := claims[created.Name]
		switch {
		case !ok || claim.UID != created.UID || claim.DeletionTimestamp != nil:
			return "gone: replacement nodeclaim " + created.Name + " was deleted before it was initialized"
		case !meta.IsStatusConditionTrue(claim.Status.Conditions, v1alpha1.ConditionInitialized):
			return "replacement nodeclaim " + created.Name + " is not initialized within " + q.opts.ReplacementTimeout.String()
		}
	}
	return ""
}

// take removes and returns the pending commands at stage s.
func (q *queue) take(s stage) []*pending {
	var out, keep []*pending
	for _, p := range q.pending {
		if p.stage == s {
			out = append(out, p)
		} else {
			keep = append(keep, p)
		}
	}
	q.pending = keep
	return out
}

func claimNames(claims []*v1alpha1.NodeClaim) string {
	out := make([]string, len(claims))
	for i, c := range claims {
		out[i] = c.Name
	}
	return strings.Join(out, ",")
}

// client404 drops a NotFound error: a node already gone needs no taint.
func client404(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func publish(r events.EventRecorder, evs ...Event) { stowevents.Publish(r, evs...) }
