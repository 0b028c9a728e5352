package nodeclaim

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

var _ source.Source = (*Alarms)(nil)

// Alarms wakes a controller at deadlines measured on an injected clock. A
// RequeueAfter is timed by the work queue on the wall clock, so a fake clock
// stepped past a timeout would never fire it; an alarm set on that fake clock
// does. Controllers use Alarms for deadlines (launch and registration
// timeouts, a termination grace period) and RequeueAfter for polling the
// outside world (evictions, instance termination, capacity retries).
//
// Alarms is a controller-runtime source: pass it to WatchesRawSource. Alarms
// set before the controller starts are delivered when it does.
type Alarms struct {
	clk clock.Clock

	mu      sync.Mutex
	ctx     context.Context
	queue   workqueue.TypedRateLimitingInterface[reconcile.Request]
	pending map[reconcile.Request]time.Time // request -> earliest instant it wakes at
}

// NewAlarms returns alarms timed on clk.
func NewAlarms(clk clock.Clock) *Alarms {
	return &Alarms{clk: clk, pending: map[reconcile.Request]time.Time{}}
}

// Start delivers fired alarms to queue until ctx ends. It implements source.Source.
func (a *Alarms) Start(ctx context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ctx, a.queue = ctx, queue
	for req, at := range a.pending {
		a.arm(req, at)
	}
	return nil
}

// Set wakes req at the instant at, unless an earlier alarm for it is pending.
// An alarm already due enqueues req at once.
func (a *Alarms) Set(req reconcile.Request, at time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if cur, ok := a.pending[req]; ok && !at.Before(cur) {
		return
	}
	a.pending[req] = at
	if a.queue != nil {
		a.arm(req, at)
	}
}

// Next returns the earliest pending alarm; ok is false when there is none.
// With Due it lets a caller that drives reconciles itself (the simulator,
// which never starts the source) deliver alarms on its own clock.
func (a *Alarms) Next() (at time.Time, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, t := range a.pending {
		if !ok || t.Before(at) {
			at, ok = t, true
		}
	}
	return at, ok
}

// Due removes and returns the requests whose alarm is due at now. It is for
// a source that was never started: once started, alarms go to its queue.
func (a *Alarms) Due(now time.Time) []reconcile.Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []reconcile.Request
	for req, at := range a.pending {
		if !at.After(now) {
			out = append(out, req)
			delete(a.pending, req)
		}
	}
	slices.SortFunc(out, func(x, y reconcile.Request) int { return strings.Compare(x.String(), y.String()) })
	return out
}

// Pending returns how many requests have an alarm that has not fired.
func (a *Alarms) Pending() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.pending)
}

// arm starts waiting for one alarm; a.mu is held.
func (a *Alarms) arm(req reconcile.Request, at time.Time) {
	wait := at.Sub(a.clk.Now())
	if wait <= 0 {
		delete(a.pending, req)
		a.queue.Add(req)
		return
	}
	timer := a.clk.NewTimer(wait)
	ctx, queue := a.ctx, a.queue
	go func() {
		select {
		case <-ctx.Done():
			timer.Stop()
		case <-timer.C():
			a.fire(req, at, queue)
		}
	}()
}

func (a *Alarms) fire(req reconcile.Request, at time.Time, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	a.mu.Lock()
	if a.pending[req].Equal(at) {
		delete(a.pending, req)
	}
	a.mu.Unlock()
	queue.Add(req)
}
