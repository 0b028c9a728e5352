// Package marker marks the Node of an EC2 instance with an interruption
// mark, through interruption.MarkNode (the one writer of the format) and a
// controller-runtime client: read the Node, mark it, update it with its
// resourceVersion, and read it again after a conflict.
//
// A Capacity Block's warning names the block, not its instances: its Nodes
// are found by the label Stowage puts on a node launched into a reservation
// (MarkReservation), listed live.
//
// Nodes are found by provider id (aws:///<zone>/<instance id>) through an
// index of instance id -> Node name that lives as long as the Lambda's
// container. The index is only a guess: every hit is read live and checked,
// and a miss lists the Nodes again before the instance is declared to have
// no Node, so that a stale index never swallows a real interruption.
//
// An instance with no Node may still be booting: its NodeClaim (found by
// status.providerID) is marked instead, with interruption.MarkClaim, so that
// the controller replaces it before its Node registers and takes pods.
package marker

import (
	"context"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/interruption"
)

// Result is what marking an instance's Node came to.
type Result int

// Results of Mark.
const (
	// Marked: the Node changed.
	Marked Result = iota
	// Unchanged: the Node already carried the mark, or a stronger one (a
	// redelivered event, a rebalance recommendation after a spot warning).
	Unchanged
	// NoNode: neither a Node nor a NodeClaim not being deleted has the
	// instance's provider id; it has gone, or is not Stowage's.
	NoNode
	// ClaimMarked: the instance has no Node yet (it boots); its NodeClaim
	// changed.
	ClaimMarked
)

func (r Result) String() string {
	return [...]string{"marked", "unchanged", "no node", "nodeclaim marked"}[r]
}

// listPage bounds each page of the Node list.
const listPage = 500

// Marker marks Nodes. It is safe for concurrent use.
type Marker struct {
	kube client.Client

	mu sync.Mutex
	// instance id -> name of the Node whose provider id ends with it
	byInstance map[string]string
	// batch counts NewBatch calls; listedIn is the batch of the last list.
	batch, listedIn uint64
}

// New returns a Marker reading and writing Nodes and NodeClaims through
// kube, which needs get, list and update on Nodes, list and update on
// NodeClaims, and nothing else.
func New(kube client.Client) *Marker {
	return &Marker{kube: kube, byInstance: map[string]string{}, batch: 1}
}

// NewBatch tells the Marker that a new batch of events arrived: the first
// miss after it lists the Nodes again. Within a batch, one list that
// started after the events arrived is as fresh as any.
func (m *Marker) NewBatch() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.batch++
}

// Mark marks the Node of the instance, or its NodeClaim when it has no Node
// yet, and returns what came of it and the Node's (or claim's) name. Errors
// are the API server's (a transient failure: the event should be delivered
// again).
func (m *Marker) Mark(ctx context.Context, instanceID string, mark interruption.Mark) (Result, string, error) {
	node, err := m.find(ctx, instanceID)
	if err != nil {
		return NoNode, "", err
	}
	if node == nil {
		return m.markClaim(ctx, instanceID, mark)
	}
	name := node.Name
	result, err := m.markNode(ctx, node, mark, func() (*corev1.Node, error) { return m.get(ctx, name, instanceID) })
	switch {
	case apierrors.IsNotFound(err):
		m.forget(instanceID, name)
		return NoNode, name, nil
	case err != nil:
		return 0, name, fmt.Errorf("marking node %s of instance %s: %w", name, instanceID, err)
	}
	return result, name, nil
}

// markNode marks node and updates it, reading it again with reload after a
// conflict; reload gives nil for a Node that is gone or no longer the one
// marked, which is NoNode.
func (m *Marker) markNode(ctx context.Context, node *corev1.Node, mark interruption.Mark, reload func() (*corev1.Node, error)) (Result, error) {
	result := Unchanged
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if node == nil { // a conflict: read it again
			var err error
			if node, err = reload(); err != nil || node == nil {
				result = NoNode
				return err
			}
		}
		if !interruption.MarkNode(node, mark) {
			result = Unchanged
			return nil
		}
		if err := m.kube.Update(ctx, node); err != nil {
			node = nil
			return err
		}
		result = Marked
		return nil
	})
	return result, err
}

// markClaim marks the NodeClaim of an instance that has no Node, listed
// again after a conflict.
func (m *Marker) markClaim(ctx context.Context, instanceID string, mark interruption.Mark) (Result, string, error) {
	result, name := NoNode, ""
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		claim, err := m.claimOf(ctx, instanceID)
		if err != nil || claim == nil {
			result = NoNode
			return err
		}
		name = claim.Name
		if !interruption.MarkClaim(claim, mark) {
			result = Unchanged
			return nil
		}
		if err := m.kube.Update(ctx, claim); err != nil {
			return err
		}
		result = ClaimMarked
		return nil
	})
	switch {
	case apierrors.IsNotFound(err):
		return NoNode, name, nil
	case err != nil:
		return 0, name, fmt.Errorf("marking nodeclaim %s of instance %s: %w", name, instanceID, err)
	}
	return result, name, nil
}

// claimOf lists the NodeClaims and returns the one, not being deleted, whose
// provider id names the instance; nil when none does.
func (m *Marker) claimOf(ctx context.Context, instanceID string) (*v1alpha1.NodeClaim, error) {
	opts := []client.ListOption{client.Limit(listPage)}
	for {
		list := &v1alpha1.NodeClaimList{}
		if err := m.kube.List(ctx, list, opts...); err != nil {
			return nil, fmt.Errorf("listing nodeclaims: %w", err)
		}
		for i := range list.Items {
			claim := &list.Items[i]
			if claim.DeletionTimestamp.IsZero() && InstanceID(claim.Status.ProviderID) == instanceID {
				return claim, nil
			}
		}
		if list.Continue == "" {
			return nil, nil
		}
		opts = []client.ListOption{client.Limit(listPage), client.Continue(list.Continue)}
	}
}

// find returns the Node of the instance, read live, or nil when there is
// none. A name the index gives that turns out wrong is dropped (unless
// another record's list has replaced it meanwhile) and the index asked
// again; a miss lists the Nodes unless they were listed in this batch.
func (m *Marker) find(ctx context.Context, instanceID string) (*corev1.Node, error) {
	tried := map[string]bool{}
	for {
		if name, ok := m.lookup(instanceID); ok && !tried[name] {
			node, err := m.get(ctx, name, instanceID)
			if err != nil || node != nil {
				return node, err
			}
			m.forget(instanceID, name)
			tried[name] = true
			continue
		}
		if !m.stale() {
			return nil, nil
		}
		nodes, err := m.relist(ctx)
		if err != nil {
			return nil, err
		}
		return nodes[instanceID], nil
	}
}

// get reads the Node; nil when it is gone or no longer the instance's.
func (m *Marker) get(ctx context.Context, name, instanceID string) (*corev1.Node, error) {
	node := &corev1.Node{}
	if err := m.kube.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading node %s of instance %s: %w", name, instanceID, err)
	}
	if InstanceID(node.Spec.ProviderID) != instanceID {
		return nil, nil
	}
	return node, nil
}

// relist lists every Node, rebuilds the index from them, and returns them
// by instance id.
func (m *Marker) relist(ctx context.Context) (map[string]*corev1.Node, error) {
	m.mu.Lock()
	batch := m.batch
	m.mu.Unlock()
	byInstance := map[string]*corev1.Node{}
	opts := []client.ListOption{client.Limit(listPage)}
	for {
		list := &corev1.NodeList{}
		if err := m.kube.List(ctx, list, opts...); err != nil {
			return nil, fmt.Errorf("listing nodes: %w", err)
		}
		for i := range list.Items {
			if id := InstanceID(list.Items[i].Spec.ProviderID); id != "" {
				byInstance[id] = &list.Items[i]
			}
		}
		if list.Continue == "" {
			break
		}
		opts = []client.ListOption{client.Limit(listPage), client.Continue(list.Continue)}
	}
	index := make(map[string]string, len(byInstance))
	for id, node := range byInstance {
		index[id] = node.Name
	}
	m.mu.Lock()
	m.byInstance, m.listedIn = index, batch
	m.mu.Unlock()
	return byInstance, nil
}

func (m *Marker) lookup(instanceID string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name, ok := m.byInstance[instanceID]
	return name, ok
}

// forget drops the index's entry for the instance if it still names node.
func (m *Marker) forget(instanceID, node string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byInstance[instanceID] == node {
		delete(m.byInstance, instanceID)
	}
}

// stale reports whether the index was listed before the current batch.
func (m *Marker) stale() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.listedIn < m.batch
}

// InstanceID returns the instance id of an AWS provider id
// (aws:///us-east-1a/i-0abc -> i-0abc), or "" for another provider's.
func InstanceID(providerID string) string {
	rest, ok := strings.CutPrefix(providerID, "aws://")
	if !ok {
		return ""
	}
	id := rest[strings.LastIndex(rest, "/")+1:]
	if !strings.HasPrefix(id, "i-") {
		return ""
	}
	return id
}

// MarkReservation marks every Node labelled with the capacity reservation
// (v1alpha1.LabelCapacityReservationID) and returns, per Node name, what came
// of it; no Node is no error (the block's nodes may have left it already).
// Errors are the API server's.
func (m *Marker) MarkReservation(ctx context.Context, reservationID string, mark interruption.Mark) (map[string]Result, error) {
	out := map[string]Result{}
	opts := []client.ListOption{client.MatchingLabels{v1alpha1.LabelCapacityReservationID: reservationID}, client.Limit(listPage)}
	for {
		list := &corev1.NodeList{}
		if err := m.kube.List(ctx, list, opts...); err != nil {
			return out, fmt.Errorf("listing the nodes of capacity reservation %s: %w", reservationID, err)
		}
		for i := range list.Items {
			res, err := m.markListed(ctx, &list.Items[i], reservationID, mark)
			if err != nil {
				return out, err
			}
			out[list.Items[i].Name] = res
		}
		if list.Continue == "" {
			return out, nil
		}
		opts = []client.ListOption{client.MatchingLabels{v1alpha1.LabelCapacityReservationID: reservationID},
			client.Limit(listPage), client.Continue(list.Continue)}
	}
}

// markListed marks one listed Node of a reservation, reading it again after
// a conflict; a Node gone or no longer in the reservation is NoNode.
func (m *Marker) markListed(ctx context.Context, node *corev1.Node, reservationID string, mark interruption.Mark) (Result, error) {
	name := node.Name
	result, err := m.markNode(ctx, node, mark, func() (*corev1.Node, error) {
		n := &corev1.Node{}
		if err := m.kube.Get(ctx, client.ObjectKey{Name: name}, n); err != nil || n.Labels[v1alpha1.LabelCapacityReservationID] != reservationID {
			return nil, err
		}
		return n, nil
	})
	switch {
	case apierrors.IsNotFound(err):
		return NoNode, nil
	case err != nil:
		return 0, fmt.Errorf("marking node %s of capacity reservation %s: %w", name, reservationID, err)
	}
	return result, nil
}
