package cache

import "time"

// ShortageWindow is how far back RecentShortages counts: the return to
// preferred capacity avoids an offering that went short twice within it.
const ShortageWindow = time.Hour

// shortage is one spell of an offering being short: from the first report to
// a successful launch of the offering (or an hour without a report).
// Reports within a spell (a launch retried, the provisioner trying again as
// the backoff lapses) are one shortage, not many.
type shortage struct {
	// last is the latest report of the spell.
	last time.Time
	// ended is set by a successful launch.
	ended bool
}

// noteShortage records a report of o being short at now: it extends o's
// open spell, or starts a new one when o launched since the last report or
// went ShortageWindow without one. The caller holds the lock.
func (u *Unavailable) noteShortage(o Offering, now time.Time) {
	hist := u.shortages[o]
	kept := hist[:0]
	for _, s := range hist {
		if now.Sub(s.last) < ShortageWindow {
			kept = append(kept, s)
		}
	}
	if n := len(kept); n > 0 && !kept[n-1].ended {
		kept[n-1].last = now
	} else {
		kept = append(kept, shortage{last: now}) // MarkUnavailable moves seq on
	}
	u.shortages[o] = kept
}

// endShortage closes o's open spell: it launched. The count of recent
// shortages does not change. The caller holds the lock.
func (u *Unavailable) endShortage(o Offering) {
	if hist := u.shortages[o]; len(hist) > 0 {
		hist[len(hist)-1].ended = true
	}
}

// RecentShortages counts the spells of o being short that were reported
// within the last ShortageWindow: 0 for an offering that has not been short,
// 1 for one short for a while (however often it was tried meanwhile), 2 or
// more for one that launched between shortages (it flaps).
func (u *Unavailable) RecentShortages(o Offering) int {
	u.mu.RLock()
	defer u.mu.RUnlock()
	now, n := u.clk.Now(), 0
	for _, s := range u.shortages[o] {
		if now.Sub(s.last) < ShortageWindow {
			n++
		}
	}
	return n
}
