package operator_test

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/stowage-dev/stowage/controller/operator"
	"github.com/stowage-dev/stowage/controller/options"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// fastLease makes failover quick for the test: 2 s lease, 0.25 s retry.
func fastLease(t *testing.T) *options.Options {
	o, err := options.Parse([]string{"--cluster-name=test", "--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--leader-election-namespace=default", "--leader-election-lease-duration=2s",
		"--leader-election-renew-deadline=1500ms", "--leader-election-retry-period=250ms"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

type replica struct {
	mgr    manager.Manager
	cancel context.CancelFunc
	done   chan error
	err    error
	once   sync.Once
}

// stop cancels the replica and waits for its manager to return.
func (r *replica) stop() error {
	r.once.Do(func() {
		r.cancel()
		r.err = <-r.done
	})
	return r.err
}

func startReplica(t *testing.T, cp *testenv.ControlPlane, o *options.Options, releaseOnCancel bool) *replica {
	t.Helper()
	mgr, err := operator.NewManager(cp.Config, o, hclog.NewNullLogger(), func(mo *manager.Options) {
		mo.LeaderElectionReleaseOnCancel = releaseOnCancel
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	r := &replica{mgr: mgr, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		if err := r.stop(); err != nil {
			t.Errorf("manager stopped with %v", err)
		}
	})
	return r
}

func elected(r *replica) bool {
	select {
	case <-r.mgr.Elected():
		return true
	default:
		return false
	}
}

// waitElected polls until r leads, failing after the deadline.
func waitElected(t *testing.T, r *replica, deadline time.Duration) {
	t.Helper()
	for end := time.Now().Add(deadline); !elected(r); {
		if time.Now().After(end) {
			t.Fatalf("replica not elected within %s", deadline)
		}
		select {
		case <-r.mgr.Elected():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestLeaderElectionFailover stops the leader with a standby waiting, once
// releasing the lease and once leaving it to expire (a crash), and checks
// what must hold whatever the machine's load: one leader at a time (the
// standby does not lead while the leader runs, and takes the lease only once
// it is released or its term has run out, as the Lease's own timestamps
// record), and the standby takes over. How long the handover takes is a
// figure, not a pass mark: `make bench` reports it (BENCH e2e=failover).
func TestLeaderElectionFailover(t *testing.T) {
	cp := testenv.Start(t, testenv.Options{})
	for _, tc := range []struct {
		name            string
		releaseOnCancel bool
	}{{"graceful stop releases the lease", true}, {"crash leaves the lease to expire", false}} {
		t.Run(tc.name, func(t *testing.T) {
			o := fastLease(t)
			o.LeaderElectionName = "stowage-" + map[bool]string{true: "graceful", false: "crash"}[tc.releaseOnCancel]
			history, err := testenv.WatchLease(t.Context(), cp.Config, o.LeaderElectionNamespace, o.LeaderElectionName)
			if err != nil {
				t.Fatal(err)
			}
			a := startReplica(t, cp, o, tc.releaseOnCancel)
			waitElected(t, a, 30*time.Second)
			leader := waitHolder(t, history, "", 10*time.Second)
			b := startReplica(t, cp, o, tc.releaseOnCancel)
			waitSynced(t, b) // the standby is up and trying for the lease
			if elected(b) || history.Holder() != leader {
				t.Fatal("the standby leads while the leader runs")
			}
			if err := a.stop(); err != nil {
				t.Fatalf("leader stopped with %v", err)
			}
			waitElected(t, b, 30*time.Second)
			standby := waitHolder(t, history, leader, 10*time.Second)
			handovers := history.Handovers()
			if len(handovers) != 1 || handovers[0].From != leader || handovers[0].To != standby || handovers[0].Released != tc.releaseOnCancel {
				t.Fatalf("handovers %+v, want one from the leader to the standby, released %v", handovers, tc.releaseOnCancel)
			}
			if err := history.Exclusive(); err != nil {
				t.Error(err)
			}
			t.Logf("handover %+v (lease %s, retry %s)", handovers[0], o.LeaseDuration, o.RetryPeriod)
		})
	}
}

// waitHolder waits until the Lease has a holder other than previous, and returns it.
func waitHolder(t *testing.T, h *testenv.LeaseHistory, previous string, deadline time.Duration) string {
	t.Helper()
	for end := time.Now().Add(deadline); ; {
		if holder := h.Holder(); holder != "" && holder != previous {
			return holder
		}
		if time.Now().After(end) {
			t.Fatalf("no new holder of the lease (after %q) within %s", previous, deadline)
		}
		select {
		case <-t.Context().Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitSynced waits until r's caches have synced: it runs.
func waitSynced(t *testing.T, r *replica) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if !r.mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("the standby's caches did not sync within 30 s")
	}
}
