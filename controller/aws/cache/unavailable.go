// Package cache holds the AWS layer's shortage memory: offerings (instance
// type, zone, capacity type) that EC2 recently could not launch.
package cache

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Offering names one (instance type, zone, capacity type).
type Offering struct {
	InstanceType string
	Zone         string
	CapacityType string
}

// Backoff bounds how long a short offering is avoided.
type Backoff struct {
	// Initial is how long an offering is avoided after its first shortage.
	Initial time.Duration
	// Max caps the avoidance of an offering that keeps failing.
	Max time.Duration
}

// DefaultBackoff avoids an offering 30 s after one shortage, doubling per
// consecutive shortage up to 3 min: Karpenter's flat avoidance of an
// ICE'd or interrupted offering. A longer cap kept pods waiting on a zone or
// type long after it had recovered (up to 28 minutes after a zone outage).
var DefaultBackoff = Backoff{Initial: 30 * time.Second, Max: 3 * time.Minute}

type entry struct {
	until    time.Time     // avoided until then
	penalty  time.Duration // the last avoidance period
	failures int
}

// Unavailable remembers short offerings with a per-offering exponential
// backoff on an injected clock. An offering that recovers is forgotten quickly
// (the first penalty is short, and a successful launch clears it); one that
// keeps failing is avoided for longer each time, up to Max. A failure count
// resets once an offering has stayed clear for as long as its last penalty.
type Unavailable struct {
	mu      sync.RWMutex
	clk     clock.PassiveClock
	backoff Backoff
	entries map[Offering]*entry
	// shortages are each offering's recent shortages (shortages.go)
	shortages map[Offering][]shortage
	seq       uint64
}

// NewUnavailable returns an empty shortage memory.
func NewUnavailable(clk clock.PassiveClock, b Backoff) *Unavailable {
	if b.Initial <= 0 {
		b.Initial = DefaultBackoff.Initial
	}
	if b.Max < b.Initial {
		b.Max = max(DefaultBackoff.Max, b.Initial)
	}
	return &Unavailable{clk: clk, backoff: b, entries: map[Offering]*entry{}, shortages: map[Offering][]shortage{}}
}

// MarkUnavailable records a shortage of o and returns how long it is now avoided.
func (u *Unavailable) MarkUnavailable(o Offering) time.Duration {
	u.mu.Lock()
	defer u.mu.Unlock()
	now := u.clk.Now()
	u.noteShortage(o, now)
	e, ok := u.entries[o]
	if !ok || now.Sub(e.until) >= e.penalty {
		e = &entry{}
		u.entries[o] = e
	}
	if now.Before(e.until) {
		return e.until.Sub(now) // a burst of failures from one fleet counts once
	}
	e.failures++
	e.penalty = u.backoff.Initial << min(e.failures-1, 30)
	if e.penalty > u.backoff.Max || e.penalty <= 0 {
		e.penalty = u.backoff.Max
	}
	e.until = now.Add(e.penalty)
	u.seq++
	return e.penalty
}

// MarkAvailable forgets o, as after a successful launch or a capacity signal.
func (u *Unavailable) MarkAvailable(o Offering) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.endShortage(o)
	if _, ok := u.entries[o]; ok {
		delete(u.entries, o)
		u.seq++
	}
}

// IsUnavailable reports whether o is being avoided now.
func (u *Unavailable) IsUnavailable(o Offering) bool {
	u.mu.RLock()
	defer u.mu.RUnlock()
	e, ok := u.entries[o]
	return ok && u.clk.Now().Before(e.until)
}

// Seq changes whenever the set of avoided offerings may have changed by a mark;
// expiry on the clock does not change it, so callers caching on Seq must also
// bound their cache by time (NextExpiry).
func (u *Unavailable) Seq() uint64 {
	u.mu.RLock()
	defer u.mu.RUnlock()
	return u.seq
}

// NextExpiry is the earliest time an avoided offering becomes available again,
// or a recent shortage stops counting (RecentShortages), or the zero time
// when neither will happen.
func (u *Unavailable) NextExpiry() time.Time {
	u.mu.RLock()
	defer u.mu.RUnlock()
	now := u.clk.Now()
	var next time.Time
	earliest := func(t time.Time) {
		if now.Before(t) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for _, e := range u.entries {
		earliest(e.until)
	}
	for _, hist := range u.shortages {
		for _, s := range hist {
			earliest(s.last.Add(ShortageWindow))
		}
	}
	return next
}
