package e2e_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/instance"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testbed"
)

const visibilityNS = "fresh"

// TestClaimsDeletedRightAfterLaunchTerminateTheirInstances: with EC2 hiding
// new instances from DescribeInstances and TerminateInstances for 30 s
// (eventual consistency), three claims are deleted as soon as they have
// launched. Each claim goes only once its instance is shutting down, none
// is let go while its instance runs (which leaves the instance to the
// garbage collector), and no claim launches twice.
func TestClaimsDeletedRightAfterLaunchTerminateTheirInstances(t *testing.T) {
	const delay = 30 * time.Second
	b := startBed(t, testbed.Options{VisibilityDelay: delay})
	b.create(nodeClass(), nodePool())
	r := b.startReplica("visibility", replicaOptions{releaseOnCancel: true})
	b.waitElected(r, 30*time.Second)
	gone := b.watchClaimsGo(t)
	d := deployment(visibilityNS, "apart", 3, "500m")
	d.Spec.Template.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: corev1.LabelHostname,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "apart"}}}}}}
	b.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: visibilityNS}}, d)

	var launched []v1alpha1.NodeClaim
	b.eventually(settle, func() error {
		claims, err := b.claims()
		if err != nil || len(claims) < 3 {
			return fmt.Errorf("%d nodeclaims (%v), want 3", len(claims), err)
		}
		for _, c := range claims {
			if c.Status.ProviderID == "" {
				return fmt.Errorf("nodeclaim %s has not launched", c.Name)
			}
		}
		launched = claims
		return nil
	})
	b.scale(visibilityNS, "apart", 0)
	deleted := time.Now()
	for i := range launched {
		if err := b.Admin.Delete(context.Background(), &launched[i]); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
	}
	ids := map[string]string{} // claim -> instance id
	for _, c := range launched {
		id, err := instance.ParseProviderID(c.Status.ProviderID)
		if err != nil {
			t.Fatal(err)
		}
		ids[c.Name] = id
		if in, _ := b.Emulator.Instance(id); !deleted.Before(in.LaunchTime.Add(delay)) {
			t.Fatalf("nodeclaim %s was deleted %s after its launch, past the %s EC2 hides it: the test shows nothing", c.Name, deleted.Sub(in.LaunchTime), delay)
		}
	}
	b.eventually(delay+settle, func() error { return gone.all(ids) })
	for claim, state := range gone.states(ids) {
		if state != awsemu.StateShuttingDown && state != awsemu.StateTerminated {
			t.Errorf("nodeclaim %s went while its instance %s was %s: left to the garbage collector", claim, ids[claim], state)
		}
	}
	byClaim := b.instancesByClaim()
	for claim := range ids {
		if n := len(byClaim[claim]); n != 1 {
			t.Errorf("nodeclaim %s launched %d instances, want 1", claim, n)
		}
	}
}

// claimsGoing records, for every NodeClaim deleted from the API server, the
// state its instance was in at that moment.
type claimsGoing struct {
	b  *bed
	mu sync.Mutex
	// claim -> its instance's state when the claim was deleted
	state map[string]string
}

func (b *bed) watchClaimsGo(t *testing.T) *claimsGoing {
	t.Helper()
	g := &claimsGoing{b: b, state: map[string]string{}}
	b.onClaimEvents(t, func(kind watch.EventType, claim *v1alpha1.NodeClaim) {
		if kind == watch.Deleted {
			g.seen(claim)
		}
	})
	return g
}

func (g *claimsGoing) seen(claim *v1alpha1.NodeClaim) {
	state := "no instance"
	if id, err := instance.ParseProviderID(claim.Status.ProviderID); err == nil {
		if in, ok := g.b.Emulator.Instance(id); ok {
			state = in.State
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.state[claim.Name] = state
}

// all reports whether every claim named has been deleted.
func (g *claimsGoing) all(ids map[string]string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for claim := range ids {
		if _, ok := g.state[claim]; !ok {
			return fmt.Errorf("nodeclaim %s is still there", claim)
		}
	}
	return nil
}

func (g *claimsGoing) states(ids map[string]string) map[string]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[string]string{}
	for claim := range ids {
		out[claim] = g.state[claim]
	}
	return out
}
