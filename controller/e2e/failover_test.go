package e2e_test

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/options"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// failsOver is TestEndToEnd's failover step: a standby takes over from a
// leader that dies mid-provisioning (leaving its lease to expire), with some
// of the pods' NodeClaims launched and others not.
func failsOver(t *testing.T, b *bed, leader *replica) *replica {
	standby, f := b.failOver(leader, "replica-d", ns, "api", 3)
	t.Logf("handover %s -> %s: %.2fs after the last renewal (released %v); standby elected %.2fs and the pods running %.2fs after the kill; %d CreateFleet calls for %d claims",
		f.handover.From, f.handover.To, f.handover.Gap.Seconds(), f.handover.Released, f.elected.Seconds(), f.running.Seconds(), f.calls, f.claims)
	return standby
}

// failover is what one handover measured.
type failover struct {
	handover testenv.Handover
	// elected and running are from the leader's kill to the standby leading,
	// and to every pod of the workload running.
	elected, running time.Duration
	// calls and claims count the CreateFleet requests and the NodeClaims they launched for.
	calls, claims int
}

// failOver starts a standby beside leader, creates app's pods in namespace,
// one per node, so that each needs its own NodeClaim, and stops the leader
// once its first CreateFleet for them is out (a crash
// unless the leader releases its lease on stop), and checks what must hold
// whatever the machine's load: one leader at a time (the standby does not
// lead while the leader runs, and takes the lease only once it is released
// or its term has run out, by the Lease's own timestamps), no NodeClaim
// asked for twice (one launch request per claim, whichever replica sent it;
// an idempotent retry of the same request aside), one instance per claim, and
// the standby takes over: it leads and the pods run. It returns the standby
// and the handover's figures, which are for BENCH lines, not pass marks.
func (b *bed) failOver(leader *replica, standbyName, namespace, app string, pods int32) (*replica, failover) {
	b.t.Helper()
	lease := b.watchLease()
	launches := observeLaunches(b.Emulator)
	standby := b.startReplica(standbyName, replicaOptions{releaseOnCancel: true})
	b.waitSynced(standby)
	if standby.elected() || !leader.elected() {
		b.t.Fatalf("standby elected %v, leader elected %v: want only the leader", standby.elected(), leader.elected())
	}
	b.create(oneNodeEach(deployment(namespace, app, pods, "2")))
	b.eventually(settle, func() error {
		if launches.calls() == 0 {
			return fmt.Errorf("the leader has sent no CreateFleet for %s yet", app)
		}
		return nil
	})
	killed := time.Now()
	if err := leader.stop(); err != nil {
		b.t.Fatal(err)
	}
	var f failover
	f.elected = waitLeading(b, standby, settle).Sub(killed)
	b.eventually(settle, b.running(namespace, app, int(pods)))
	f.running = time.Since(killed)
	b.eventually(settle, func() error { return b.claimsReady() })
	if err := b.oneInstancePerClaim(); err != nil {
		b.t.Error(err)
	}
	if err := launches.onePerClaim(); err != nil {
		b.t.Error(err)
	}
	f.calls, f.claims = launches.calls(), launches.claims()
	f.handover = b.handedOver(lease)
	return standby, f
}

// waitLeading waits until r leads and returns when it was seen to.
func waitLeading(b *bed, r *replica, timeout time.Duration) time.Time {
	b.t.Helper()
	select {
	case <-r.op.Manager.Elected():
		return time.Now()
	case <-time.After(timeout):
		b.t.Fatalf("replica %s not elected within %s", r.name, timeout)
		return time.Time{}
	}
}

// watchLease records the states of the replicas' Lease until the bed's owner ends.
func (b *bed) watchLease() *testenv.LeaseHistory {
	b.t.Helper()
	o, err := options.Parse(b.Flags(), func(string) string { return "" }, io.Discard)
	if err != nil {
		b.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.root.Cleanup(cancel)
	h, err := testenv.WatchLease(ctx, b.ControlPlane.Config, o.LeaderElectionNamespace, o.LeaderElectionName)
	if err != nil {
		b.t.Fatal(err)
	}
	return h
}

// handedOver checks that the lease changed hands exactly once since h
// started, never inside the old holder's term, and returns that handover.
func (b *bed) handedOver(h *testenv.LeaseHistory) testenv.Handover {
	b.t.Helper()
	var handovers []testenv.Handover
	b.eventually(10*time.Second, func() error { // the watch may lag the standby's election
		if handovers = h.Handovers(); len(handovers) != 1 {
			return fmt.Errorf("the lease changed hands %d times (%+v), want once", len(handovers), handovers)
		}
		return nil
	})
	if err := h.Exclusive(); err != nil {
		b.t.Error(err)
	}
	return handovers[0]
}

// launches records, by NodeClaim, the CreateFleet requests the emulator
// receives: their client tokens (an SDK retry or a replica repeating the
// same request keeps the token; other offerings make another) and count.
type launches struct {
	mu     sync.Mutex
	tokens map[string]map[string]int // nodeclaim -> client token -> calls
}

func observeLaunches(emu *awsemu.Emulator) *launches {
	l := &launches{tokens: map[string]map[string]int{}}
	emu.OnCall(func(c awsemu.Call) {
		if c.Action != "CreateFleet" {
			return
		}
		claim := c.InstanceTags[v1alpha1.LabelNodeClaim]
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.tokens[claim] == nil {
			l.tokens[claim] = map[string]int{}
		}
		l.tokens[claim][c.ClientToken]++
	})
	return l
}

func (l *launches) calls() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, byToken := range l.tokens {
		for _, calls := range byToken {
			n += calls
		}
	}
	return n
}

func (l *launches) claims() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.tokens)
}

// onePerClaim returns an error naming every claim that was asked for with
// more than one distinct request, or whose request named no claim.
func (l *launches) onePerClaim() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var bad []string
	for claim, byToken := range l.tokens {
		if claim == "" || len(byToken) > 1 {
			bad = append(bad, fmt.Sprintf("%q: %v", claim, byToken))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return fmt.Errorf("CreateFleet asked more than once for a nodeclaim (claim: client token -> calls): %s", strings.Join(bad, "; "))
}

// oneNodeEach gives d's pods a required anti-affinity to each other on the
// hostname: each needs a node of its own.
func oneNodeEach(d *appsv1.Deployment) *appsv1.Deployment {
	d.Spec.Template.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: d.Spec.Selector.MatchLabels},
			TopologyKey:   corev1.LabelHostname,
		}},
	}}
	return d
}
