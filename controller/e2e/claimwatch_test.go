package e2e_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// claimWatch records every NodeClaim the API server shows from its start,
// however briefly it lives: a claim deleted for a shortage may come and go
// between two polls.
type claimWatch struct {
	mu sync.Mutex
	// name -> when the watch first saw it, and its pool
	added map[string]seenClaim
	// name -> when the watch first saw it being deleted
	deleted map[string]time.Time
}

type seenClaim struct {
	pool string
	at   time.Time
}

// watchClaims starts recording; it stops when t ends.
func (b *bed) watchClaims(t *testing.T) *claimWatch {
	t.Helper()
	cw := &claimWatch{added: map[string]seenClaim{}, deleted: map[string]time.Time{}}
	b.onClaimEvents(t, cw.record)
	return cw
}

// onClaimEvents calls record with every NodeClaim event from now until t ends.
func (b *bed) onClaimEvents(t *testing.T, record func(watch.EventType, *v1alpha1.NodeClaim)) {
	t.Helper()
	c, err := client.NewWithWatch(b.ControlPlane.Config, client.Options{Scheme: b.Admin.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w, err := c.Watch(ctx, &v1alpha1.NodeClaimList{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if claim, ok := ev.Object.(*v1alpha1.NodeClaim); ok {
				record(ev.Type, claim)
			}
		}
	}()
	t.Cleanup(func() { w.Stop(); cancel(); <-done })
}

func (cw *claimWatch) record(kind watch.EventType, claim *v1alpha1.NodeClaim) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	now := time.Now()
	if _, seen := cw.added[claim.Name]; !seen {
		cw.added[claim.Name] = seenClaim{pool: claim.Labels[v1alpha1.LabelNodePool], at: now}
	}
	if _, seen := cw.deleted[claim.Name]; !seen && (kind == watch.Deleted || claim.DeletionTimestamp != nil) {
		cw.deleted[claim.Name] = now
	}
}

// inPool returns the names of the claims of pool seen, and when the first
// was.
func (cw *claimWatch) inPool(pool string) ([]string, time.Time) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	var names []string
	var first time.Time
	for name, s := range cw.added {
		if s.pool != pool {
			continue
		}
		names = append(names, name)
		if first.IsZero() || s.at.Before(first) {
			first = s.at
		}
	}
	return names, first
}

// deletedClaims returns the claims seen being deleted.
func (cw *claimWatch) deletedClaims() []string {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	var out []string
	for name := range cw.deleted {
		out = append(out, name)
	}
	return out
}
