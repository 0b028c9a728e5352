package aws

import (
	"context"
	"sync"
	"time"
)

// DefaultRefreshInterval is how often the catalogue is refreshed when
// Options.RefreshInterval is zero.
const DefaultRefreshInterval = 5 * time.Minute

// The background loops Start runs, as Options.Observe names them.
const (
	LoopRefresh          = "refresh"
	LoopLaunchTemplateGC = "launch-template-gc"
	LoopZonalShift       = "zonal-shift"
)

// Start runs the background loops until ctx ends, then returns nil: the
// catalogue refresh (instance types, offerings, prices, capacity reservations)
// every Options.RefreshInterval, the launch template GC every
// Options.GCInterval and, with ARC, the zonal shifts every
// Options.ZonalShiftInterval, each once straight away. Launches never wait for them:
// they read the last catalogue, which each refresh replaces atomically.
func (c *CloudProvider) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Go(func() { c.every(ctx, LoopRefresh, c.opts.RefreshInterval, c.Refresh, c.reservations.NextStart) })
	if c.shifts != nil {
		wg.Go(func() {
			c.every(ctx, LoopZonalShift, c.opts.ZonalShiftInterval, c.RefreshZonalShifts, c.shifts.nextExpiry)
		})
	}
	if c.opts.DryRun {
		wg.Wait() // the GC deletes templates: not in a dry run
		return nil
	}
	wg.Go(func() {
		c.every(ctx, LoopLaunchTemplateGC, c.opts.GCInterval, func(ctx context.Context) error {
			_, err := c.GarbageCollectLaunchTemplates(ctx)
			return err
		}, nil)
	})
	wg.Wait()
	return nil
}

// every runs fn now and then every interval on the clock until ctx ends. Each
// pass is due an interval after the previous one was due, so the time a pass
// takes does not push the schedule back; a pass that comes due while the
// previous one still runs starts when it ends (once, however late). wake,
// when set, names an earlier instant for an extra pass (zero for none),
// which leaves the schedule as it is.
func (c *CloudProvider) every(ctx context.Context, loop string, interval time.Duration, fn func(context.Context) error, wake func(time.Time) time.Time) {
	due := c.opts.Clock.Now()
	for ctx.Err() == nil {
		scheduled := !c.opts.Clock.Now().Before(due)
		err := fn(ctx)
		if err != nil && ctx.Err() == nil {
			c.log.Warn("background pass failed", "loop", loop, "error", err)
		}
		if c.opts.Observe != nil {
			c.opts.Observe(loop, err)
		}
		now := c.opts.Clock.Now()
		if scheduled {
			if due = due.Add(interval); due.Before(now) {
				due = now
			}
		}
		at := due
		if wake != nil {
			if w := wake(now); !w.IsZero() && w.Before(at) {
				at = w
			}
		}
		if !c.waitUntil(ctx, at) {
			return
		}
	}
}

// NextReservationStart is the next start after now of a capacity
// reservation the catalogue knows (a Capacity Block's), zero for none: when
// Start's refresh loop wakes between its passes, for a caller that drives
// Refresh itself (the simulator).
func (c *CloudProvider) NextReservationStart(now time.Time) time.Time {
	return c.reservations.NextStart(now)
}

// waitUntil waits on the clock until t; false when ctx ends first.
func (c *CloudProvider) waitUntil(ctx context.Context, t time.Time) bool {
	d := t.Sub(c.opts.Clock.Now())
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := c.opts.Clock.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C():
		return true
	}
}
