package provisioning

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// gateWriter records how many creates run at once, and refuses the first
// create of the names listed in taken.
type gateWriter struct {
	mu             sync.Mutex
	inFlight, peak atomic.Int32
	taken          map[string]bool
	names          []string
}

func (w *gateWriter) CreateNodeClaim(_ context.Context, claim *v1alpha1.NodeClaim) (*v1alpha1.NodeClaim, error) {
	n := w.inFlight.Add(1)
	defer w.inFlight.Add(-1)
	for {
		p := w.peak.Load()
		if n <= p || w.peak.CompareAndSwap(p, n) {
			break
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.taken[claim.Name] {
		delete(w.taken, claim.Name)
		return nil, apierrors.NewAlreadyExists(schema.GroupResource{Group: v1alpha1.Group, Resource: "nodeclaims"}, claim.Name)
	}
	w.names = append(w.names, claim.Name)
	return claim.DeepCopy(), nil
}

func TestCreateAllKeepsDecisionOrderAndRetriesTakenNames(t *testing.T) {
	pool := &v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	it := &cloudprovider.InstanceType{Name: "c6i.large"}
	var ncs []*scheduler.NewNodeClaim
	for range 20 {
		ncs = append(ncs, &scheduler.NewNodeClaim{NodePool: "web", Requirements: scheduling.Requirements{}, InstanceTypes: []*cloudprovider.InstanceType{it}})
	}
	names := func() func() string {
		r := rand.New(rand.NewPCG(1, 2))
		return RandomSuffix(r)
	}
	first := names()() // the first name the seeded source gives: make it taken
	w := &gateWriter{taken: map[string]bool{"web-" + first: true}}
	p := NewProvisioner(nil, nil, w, nil, names(), WithCreateConcurrency(4))
	out := p.createAll(t.Context(), ncs, []*v1alpha1.NodePool{pool})
	seen := map[string]bool{}
	for i, c := range out {
		if c.err != nil {
			t.Fatalf("claim %d: %v", i, c.err)
		}
		if seen[c.claim.Name] {
			t.Fatalf("name %s given twice", c.claim.Name)
		}
		seen[c.claim.Name] = true
	}
	if out[0].claim.Name == "web-"+first {
		t.Errorf("claim 0 kept the taken name %s", out[0].claim.Name)
	}
	if peak := w.peak.Load(); peak > 4 {
		t.Errorf("%d creates at once, want at most 4", peak)
	}
	if got := fmt.Sprint(len(w.names)); got != "20" {
		t.Errorf("%s claims created, want 20", got)
	}
}
