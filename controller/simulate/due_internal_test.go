package simulate

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestDueQueueAnswersAsAScanOfEveryEntry drives a dueQueue and a plain map
// with the same random sets, removals and clock moves, and checks that the
// queue's first and next give what a scan of every map entry gives.
func TestDueQueueAnswersAsAScanOfEveryEntry(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		q, plain := newDueQueue(), map[dueKey]time.Time{}
		now := epoch
		for step := range 3000 {
			key := dueKey{reconciler(rng.IntN(3)), fmt.Sprintf("claim-%d", rng.IntN(40))}
			switch op := rng.IntN(10); {
			case op < 4:
				at := now.Add(time.Duration(rng.IntN(5)-1) * time.Second)
				q.set(key, at)
				plain[key] = at
			case op < 5:
				q.remove(key)
				delete(plain, key)
			case op < 6:
				now = now.Add(time.Duration(rng.IntN(3)) * time.Second)
			default:
				want, wantOK := scanFirst(plain, now)
				got, ok := q.first(now)
				if got != want || ok != wantOK {
					t.Fatalf("seed %d step %d: first = %v %v, a scan gives %v %v", seed, step, got, ok, want, wantOK)
				}
				if ok {
					q.remove(got)
					delete(plain, got)
				}
			}
			wantNext, wantOK := scanNext(plain)
			if got, ok := q.next(); !got.Equal(wantNext) || ok != wantOK {
				t.Fatalf("seed %d step %d: next = %v %v, a scan gives %v %v", seed, step, got, ok, wantNext, wantOK)
			}
		}
	}
}

func scanFirst(due map[dueKey]time.Time, now time.Time) (dueKey, bool) {
	var best dueKey
	found := false
	for k, at := range due {
		if at.After(now) {
			continue
		}
		if !found || cmp.Or(cmp.Compare(k.ctl, best.ctl), cmp.Compare(k.name, best.name)) < 0 {
			best, found = k, true
		}
	}
	return best, found
}

func scanNext(due map[dueKey]time.Time) (time.Time, bool) {
	var next time.Time
	found := false
	for _, at := range due {
		if !found || at.Before(next) {
			next, found = at, true
		}
	}
	return next, found
}
