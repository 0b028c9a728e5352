// Package nodeclaim holds what the NodeClaim controllers share: the field
// indexes that pair a NodeClaim with its Node and a Node with its pods, the
// lookups built on them, condition helpers stamped from an injected clock, and
// Alarms, which turn deadlines on that clock into reconciles.
//
// The controllers themselves live in the sub-packages lifecycle (launch,
// registration, initialization, liveness) and garbagecollection, and in
// controller/termination.
package nodeclaim

import (
	"context"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// Field indexes registered by IndexFields; the lookups below need them, so a
// client reading from a cache without them fails.
const (
	// NodeProviderIDField indexes Nodes by spec.providerID.
	NodeProviderIDField = "spec.providerID"
	// ClaimProviderIDField indexes NodeClaims by status.providerID.
	ClaimProviderIDField = "status.providerID"
	// PodNodeNameField indexes Pods by spec.nodeName.
	PodNodeNameField = "spec.nodeName"
)

// LabelRegistered marks a Node whose labels and taints Stowage has applied, so
// that startup taints, once removed by their owner, are never put back.
const LabelRegistered = v1alpha1.Group + "/registered"

// indexed remembers which (indexer, field) pairs are registered, so that every
// controller can ask for the indexes it needs without knowing the others.
var indexed sync.Map // indexKey -> struct{}

type indexKey struct {
	indexer client.FieldIndexer
	field   string
}

// IndexFields registers the NodeClaim and Node provider-id indexes with
// indexer (a manager's field indexer); withPods adds the Pod node-name index.
// Registering an index twice on the same indexer is a no-op.
func IndexFields(ctx context.Context, indexer client.FieldIndexer, withPods bool) error {
	if err := index(ctx, indexer, &corev1.Node{}, NodeProviderIDField, func(o client.Object) []string {
		return nonEmpty(o.(*corev1.Node).Spec.ProviderID)
	}); err != nil {
		return err
	}
	if err := index(ctx, indexer, &v1alpha1.NodeClaim{}, ClaimProviderIDField, func(o client.Object) []string {
		return nonEmpty(o.(*v1alpha1.NodeClaim).Status.ProviderID)
	}); err != nil {
		return err
	}
	if !withPods {
		return nil
	}
	return index(ctx, indexer, &corev1.Pod{}, PodNodeNameField, func(o client.Object) []string {
		return nonEmpty(o.(*corev1.Pod).Spec.NodeName)
	})
}

func index(ctx context.Context, indexer client.FieldIndexer, obj client.Object, field string, fn client.IndexerFunc) error {
	key := indexKey{indexer: indexer, field: fmt.Sprintf("%T/%s", obj, field)}
	if _, loaded := indexed.LoadOrStore(key, struct{}{}); loaded {
		return nil
	}
	if err := indexer.IndexField(ctx, obj, field, fn); err != nil {
		indexed.Delete(key)
		return fmt.Errorf("indexing %T by %s: %w", obj, field, err)
	}
	return nil
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// NodeForClaim returns the Node whose spec.providerID is the claim's
// status.providerID, or nil when the claim has not launched or its Node has
// not registered. More than one such Node is an error.
func NodeForClaim(ctx context.Context, kube client.Reader, claim *v1alpha1.NodeClaim) (*corev1.Node, error) {
	if claim.Status.ProviderID == "" {
		return nil, nil
	}
	return NodeForProviderID(ctx, kube, claim.Status.ProviderID)
}

// NodeForProviderID returns the Node with the provider id, or nil when there is none.
func NodeForProviderID(ctx context.Context, kube client.Reader, providerID string) (*corev1.Node, error) {
	nodes := &corev1.NodeList{}
	if err := kube.List(ctx, nodes, client.MatchingFields{NodeProviderIDField: providerID}); err != nil {
		return nil, fmt.Errorf("listing nodes with provider id %s: %w", providerID, err)
	}
	switch len(nodes.Items) {
	case 0:
		return nil, nil
	case 1:
		return &nodes.Items[0], nil
	}
	return nil, fmt.Errorf("finding the node of %s: %d nodes have that provider id", providerID, len(nodes.Items))
}

// ClaimForNode returns the NodeClaim whose status.providerID is the Node's
// spec.providerID, or nil when no claim owns the Node.
func ClaimForNode(ctx context.Context, kube client.Reader, node *corev1.Node) (*v1alpha1.NodeClaim, error) {
	if node.Spec.ProviderID == "" {
		return nil, nil
	}
	claims := &v1alpha1.NodeClaimList{}
	if err := kube.List(ctx, claims, client.MatchingFields{ClaimProviderIDField: node.Spec.ProviderID}); err != nil {
		return nil, fmt.Errorf("listing nodeclaims with provider id %s: %w", node.Spec.ProviderID, err)
	}
	switch len(claims.Items) {
	case 0:
		return nil, nil
	case 1:
		return &claims.Items[0], nil
	}
	return nil, fmt.Errorf("finding the nodeclaim of node %s: %d nodeclaims have its provider id", node.Name, len(claims.Items))
}

// PoolFor returns the NodePool named by the claim's nodepool label, or nil
// when the claim has no such label or the pool is gone.
func PoolFor(ctx context.Context, kube client.Reader, claim *v1alpha1.NodeClaim) (*v1alpha1.NodePool, error) {
	name := claim.Labels[v1alpha1.LabelNodePool]
	if name == "" {
		return nil, nil
	}
	pool := &v1alpha1.NodePool{}
	if err := kube.Get(ctx, client.ObjectKey{Name: name}, pool); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("getting nodepool %s: %w", name, err)
	}
	return pool, nil
}

// InstanceID returns the last segment of a provider id
// ("aws:///us-east-1a/i-0abc" -> "i-0abc"), the value logged as instance_id.
func InstanceID(providerID string) string {
	return providerID[strings.LastIndex(providerID, "/")+1:]
}
