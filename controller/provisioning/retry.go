package provisioning

import "time"

// ShortageMemory is the cloud's memory of short offerings: when the next one
// it avoids may be tried again (the zero time when none).
type ShortageMemory interface {
	NextExpiry() time.Time
}

// WithShortageMemory makes a batch that leaves pods unschedulable say when to
// try them again: when the next short offering may be tried. Nothing in the
// cluster changes when a zone or an offering comes back, so without it those
// pods wait for an unrelated event.
func WithShortageMemory(m ShortageMemory) Option { return func(p *Provisioner) { p.shortages = m } }

// retryAt is when a batch that left pods unschedulable should run again; zero
// for never.
func (p *Provisioner) retryAt(b *Batch) time.Time {
	if p.shortages == nil || b.Decision == nil || len(b.Decision.Unschedulable) == 0 {
		return time.Time{}
	}
	return p.shortages.NextExpiry()
}

// RetryAt opens a batch window at at, unless another opens first; the zero
// time changes nothing.
func (t *Triggers) RetryAt(at time.Time) {
	if at.IsZero() {
		return
	}
	t.mu.Lock()
	if t.retry.IsZero() || at.Before(t.retry) {
		t.retry = at
	}
	t.mu.Unlock()
	t.markRecheck()
}

// retryDue reports whether the retry is due now, and clears it if so.
func (t *Triggers) retryDue() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.retry.IsZero() || t.clk.Now().Before(t.retry) {
		return false
	}
	t.retry = time.Time{}
	return true
}
