// Package provisioning turns pending pods into NodeClaims: a Batcher gathers
// the pods that arrive together, a Provisioner solves each batch against the
// cluster state and creates the claims, and a Controller wires both to the
// pod watch.
package provisioning

import (
	"context"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Default batch windows.
const (
	DefaultBatchIdleDuration = time.Second
	DefaultBatchMaxDuration  = 10 * time.Second
)

// BatcherOptions size the batch window.
type BatcherOptions struct {
	// IdleDuration closes the window once no trigger has come for this long;
	// DefaultBatchIdleDuration when zero.
	IdleDuration time.Duration
	// MaxDuration closes the window this long after it opened, however busy;
	// DefaultBatchMaxDuration when zero.
	MaxDuration time.Duration
}

// Batcher gathers triggers into windows. The first trigger opens a window;
// it closes after IdleDuration without a trigger, or MaxDuration after it
// opened. Every time comes from the injected clock, so a FakeClock drives it
// in tests and in the simulator.
type Batcher struct {
	clk  clock.Clock
	opts BatcherOptions
	// wake carries one token when a window has opened and not yet been waited on.
	wake chan struct{}

	mu     sync.Mutex
	open   bool
	opened time.Time // when the open window opened
	last   time.Time // when the open window's last trigger came
}

// NewBatcher returns a batcher on clk.
func NewBatcher(clk clock.Clock, opts BatcherOptions) *Batcher {
	if opts.IdleDuration <= 0 {
		opts.IdleDuration = DefaultBatchIdleDuration
	}
	if opts.MaxDuration <= 0 {
		opts.MaxDuration = DefaultBatchMaxDuration
	}
	return &Batcher{clk: clk, opts: opts, wake: make(chan struct{}, 1)}
}

// Trigger opens a window, or extends the open one by IdleDuration. It never
// blocks.
func (b *Batcher) Trigger() {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clk.Now()
	b.last = now
	if !b.open {
		b.open, b.opened = true, now
	}
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// Wait blocks until a window has opened and closed and returns true, or
// returns false once ctx is done. Triggers after the window closed open the
// next one. One goroutine at a time may Wait.
func (b *Batcher) Wait(ctx context.Context) bool {
	select {
	case <-b.wake:
	case <-ctx.Done():
		return false
	}
	for {
		d, closed := b.remaining()
		if closed {
			return true
		}
		if !b.sleep(ctx, d) {
			return false
		}
	}
}

// Poll is Wait for a caller that drives the clock itself (the simulator): it
// reports whether a window has opened and closed, resetting it as Wait would,
// and otherwise when the open window will close (zero when none is open).
func (b *Batcher) Poll() (closed bool, closesAt time.Time) {
	b.mu.Lock()
	open := b.open
	b.mu.Unlock()
	if !open {
		return false, time.Time{}
	}
	d, closed := b.remaining()
	if closed {
		select {
		case <-b.wake:
		default:
		}
		return true, time.Time{}
	}
	return false, b.clk.Now().Add(d)
}

// remaining is the time until the window closes, or closed when it has (and
// then the window is reset so the next trigger opens a new one).
func (b *Batcher) remaining() (time.Duration, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clk.Now()
	end := b.last.Add(b.opts.IdleDuration)
	if limit := b.opened.Add(b.opts.MaxDuration); limit.Before(end) {
		end = limit
	}
	if now.Before(end) {
		return end.Sub(now), false
	}
	b.open = false
	select {
	case <-b.wake: // a trigger that came during the window belongs to it
	default:
	}
	return 0, true
}

// sleep waits d on the clock; false when ctx ended first.
func (b *Batcher) sleep(ctx context.Context, d time.Duration) bool {
	t := b.clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	}
}
