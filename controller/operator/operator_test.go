package operator_test

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
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

func lease(t *testing.T, c client.Client, name string) *coordinationv1.Lease {
	t.Helper()
	var l coordinationv1.Lease
	if err := c.Get(t.Context(), types.NamespacedName{Namespace: "default", Name: name}, &l); err != nil {
		t.Fatal(err)
	}
	return &l
}

func TestLeaderElectionFailover(t *testing.T) {
	cp := testenv.Start(t, testenv.Options{})
	for _, tc := range []struct {
		name            string
		releaseOnCancel bool
	}{{"graceful stop releases the lease", true}, {"crash leaves the lease to expire", false}} {
		t.Run(tc.name, func(t *testing.T) {
			o := fastLease(t)
			o.LeaderElectionName = "stowage-" + map[bool]string{true: "graceful", false: "crash"}[tc.releaseOnCancel]
			a := startReplica(t, cp, o, tc.releaseOnCancel)
			waitElected(t, a, 30*time.Second)
			b := startReplica(t, cp, o, tc.releaseOnCancel)
			c := a.mgr.GetClient()
			first := lease(t, c, o.LeaderElectionName)
			if elected(b) {
				t.Fatal("two replicas lead at once")
			}
			if err := a.stop(); err != nil {
				t.Fatalf("leader stopped with %v", err)
			}
			waitElected(t, b, 30*time.Second)
			second := lease(t, b.mgr.GetClient(), o.LeaderElectionName)
			if *second.Spec.HolderIdentity == *first.Spec.HolderIdentity {
				t.Errorf("lease still held by %s after failover", *first.Spec.HolderIdentity)
			}
			// The standby takes over within lease duration + retry period of the
			// leader's last renewal, as the Lease's own timestamps record it.
			gap := second.Spec.AcquireTime.Sub(first.Spec.RenewTime.Time)
			bound := o.LeaseDuration + o.RetryPeriod + time.Second
			if gap > bound {
				t.Errorf("failover took %s after the last renewal, want at most %s", gap, bound)
			}
			t.Logf("failover: %s after the leader's last renewal (lease %s)", gap, o.LeaseDuration)
		})
	}
}
