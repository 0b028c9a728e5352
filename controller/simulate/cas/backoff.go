package cas

import "time"

// backoff is CA's exponential node group backoff (utils/backoff): the first
// failure backs a group off for initial; a failure after that backoff ended
// doubles it, up to max; a failure during a backoff restarts it without
// doubling; the record is dropped reset after the last failure.
type backoff struct {
	initial, max, reset time.Duration
	// group name -> backoff state
	groups map[string]backoffInfo
}

type backoffInfo struct {
	duration   time.Duration
	until      time.Time
	lastFailed time.Time
	reason     string
}

func newBackoff(initial, maxDuration, reset time.Duration) *backoff {
	return &backoff{initial: initial, max: maxDuration, reset: reset, groups: map[string]backoffInfo{}}
}

// fail records a failure of group at now and returns when its backoff ends.
func (b *backoff) fail(group, reason string, now time.Time) time.Time {
	d := b.initial
	if info, ok := b.groups[group]; ok {
		d = info.duration
		if !info.until.After(now) {
			d = min(2*info.duration, b.max)
		}
	}
	until := now.Add(d)
	b.groups[group] = backoffInfo{duration: d, until: until, lastFailed: now, reason: reason}
	return until
}

// backedOff reports whether group is backed off at now, until when and why.
func (b *backoff) backedOff(group string, now time.Time) (backoffInfo, bool) {
	info, ok := b.groups[group]
	return info, ok && info.until.After(now)
}

// removeStale forgets groups whose last failure is older than reset.
func (b *backoff) removeStale(now time.Time) {
	for g, info := range b.groups {
		if info.lastFailed.Add(b.reset).Before(now) {
			delete(b.groups, g)
		}
	}
}
