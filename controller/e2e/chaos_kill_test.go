package e2e_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowaws "github.com/stowage-dev/stowage/controller/aws"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
)

// killPoint is where in the leader's work a kill strikes.
type killPoint string

// Kill points.
const (
	// killMidBatch: right after the provisioner created the n-th NodeClaim of
	// its batches, the rest of the batch not yet created.
	killMidBatch killPoint = "mid-batch"
	// killAfterLaunch: right after CreateFleet launched a claim's instance,
	// before the claim's status records it.
	killAfterLaunch killPoint = "after-launch"
	// killMidStatus: instead of writing a NodeClaim's status (launch,
	// registration, initialization), so that the write is lost.
	killMidStatus killPoint = "mid-status"
	// killMidDrain: right after the n-th eviction of a node being drained.
	killMidDrain killPoint = "mid-drain"
	// killAnytime: at a random moment.
	killAnytime killPoint = "anytime"
)

// chaos runs Stowage as a leader and a standby, in process, and kills the
// leader like a crash (its lease left to expire) at armed points of its work.
type chaos struct {
	b   *bed
	rng *rand.Rand
	ctx context.Context
	// ix sends the soak's interruptions and checks no pod goes down with them.
	ix *chaosInterruptions

	mu sync.Mutex
	// armed is the point the next kill strikes at, after countdown more events there.
	armed     killPoint
	countdown int
	// struck says the armed point struck: its kill is on its way.
	struck  bool
	live    []*replica
	started int
	// kills are the kills done, as point@replica; leasesLost the replicas
	// that ended on their own.
	kills, leasesLost []string
	// killed hears of each kill once the killed replica has stopped.
	killed chan killPoint
}

func newChaos(b *bed, seed int64) *chaos {
	return &chaos{b: b, rng: rand.New(rand.NewPCG(uint64(seed), 0x6b696c6c)), ctx: context.Background(), killed: make(chan killPoint, 8)} //nolint:gosec // a seed's bits
}

// slot tells a replica's hooks which replica they are in.
type slot struct{ r atomic.Pointer[replica] }

// startReplica starts one more replica with the kill hooks, crash-like (its
// lease is not released when it stops).
func (c *chaos) startReplica() {
	c.started++
	s := &slot{}
	r := c.b.startReplica(fmt.Sprintf("chaos-%d", c.started), replicaOptions{
		mayLoseLease: true,
		wrap: func(cp *stowaws.CloudProvider) cloudprovider.CloudProvider {
			return &chaosCloud{CloudProvider: cp, c: c, s: s}
		},
		manager: func(mo *manager.Options) {
			mo.NewClient = func(cfg *rest.Config, o client.Options) (client.Client, error) {
				inner, err := client.NewWithWatch(cfg, o)
				if err != nil {
					return nil, err
				}
				return interceptor.NewClient(inner, c.hooks(s)), nil
			}
		},
	})
	s.r.Store(r)
	c.mu.Lock()
	c.live = append(c.live, r)
	c.mu.Unlock()
}

// arm sets the point the next kill strikes at: the n-th event there.
func (c *chaos) arm(p killPoint, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed, c.countdown, c.struck = p, n, false
}

// strike reports whether an event at p in the slot's replica is the armed
// kill; if so it disarms and kills that replica, in the background.
func (c *chaos) strike(p killPoint, s *slot) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := s.r.Load()
	if c.armed != p || r == nil || !r.leads() {
		return false
	}
	if c.countdown--; c.countdown > 0 {
		return false
	}
	c.armed, c.struck = "", true
	c.killLocked(r, p)
	return true
}

// killLeader kills whichever replica leads now, in place of any armed
// point; it reports whether a kill is on its way (this one, or the armed
// one that struck meanwhile).
func (c *chaos) killLeader() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.struck {
		return true
	}
	c.armed = ""
	for _, r := range c.live {
		if r.leads() {
			c.killLocked(r, killAnytime)
			return true
		}
	}
	return false
}

func (c *chaos) killLocked(r *replica, p killPoint) {
	c.kills = append(c.kills, string(p)+"@"+r.name)
	for i, x := range c.live {
		if x == r {
			c.live = append(c.live[:i:i], c.live[i+1:]...)
			break
		}
	}
	go func() {
		_ = r.stop() // a crash: cancelled, the lease left to expire
		c.killed <- p
	}()
}

// replicas is how many replicas are alive; it forgets, and counts, those
// that ended on their own (a lease lost to a late renewal).
func (c *chaos) replicas() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.live {
		if !r.alive() {
			c.leasesLost = append(c.leasesLost, r.name)
		}
	}
	c.live = slices.DeleteFunc(c.live, func(r *replica) bool { return !r.alive() })
	return len(c.live)
}

// leads reports whether the replica runs and holds the lease: a replica
// that lost its lease stays elected in its manager's eyes until it returns.
func (r *replica) leads() bool { return r.alive() && r.elected() }

// leader is the replica that leads, or nil.
func (c *chaos) leader() *replica {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.live {
		if r.leads() {
			return r
		}
	}
	return nil
}

// hooks strike mid-batch after a NodeClaim's creation, mid-status instead
// of a NodeClaim's status write, and mid-drain after an eviction.
func (c *chaos) hooks(s *slot) interceptor.Funcs {
	return interceptor.Funcs{
		Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			err := cl.Create(ctx, obj, opts...)
			if _, ok := obj.(*v1alpha1.NodeClaim); ok && err == nil {
				c.strike(killMidBatch, s)
			}
			return err
		},
		SubResourcePatch: func(ctx context.Context, cl client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*v1alpha1.NodeClaim); ok && sub == "status" && c.strike(killMidStatus, s) {
				return fmt.Errorf("killed before writing nodeclaim %s's status", obj.GetName())
			}
			return cl.SubResource(sub).Patch(ctx, obj, p, opts...)
		},
		SubResourceCreate: func(ctx context.Context, cl client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
			err := cl.SubResource(sub).Create(ctx, obj, subObj, opts...)
			if sub == "eviction" && err == nil {
				c.strike(killMidDrain, s)
			}
			return err
		},
	}
}

// chaosCloud strikes after a launch: the instance runs, the claim's status
// never learns of it from this replica.
type chaosCloud struct {
	*stowaws.CloudProvider
	c *chaos
	s *slot
}

func (cc *chaosCloud) Create(ctx context.Context, claim *v1alpha1.NodeClaim) (*v1alpha1.NodeClaim, error) {
	out, err := cc.CloudProvider.Create(ctx, claim)
	if err == nil && cc.c.strike(killAfterLaunch, cc.s) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return out, err
}

// killWithin arms p and waits for the kill; when the point is not reached
// within window (the work it strikes in did not come), it kills the leader
// at once instead.
func (c *chaos) killWithin(p killPoint, window time.Duration) killPoint {
	if p == killAnytime {
		window = time.Duration(500+c.rng.IntN(2500)) * time.Millisecond
		c.arm("", 0)
	} else {
		c.arm(p, 1+c.rng.IntN(3))
	}
	timer := time.NewTimer(window)
	defer timer.Stop()
	select {
	case got := <-c.killed:
		return got
	case <-timer.C:
		if c.killLeader() {
			return <-c.killed
		}
		return ""
	}
}
