package simulate

import (
	"cmp"
	"container/heap"
	"time"
)

// dueQueue holds when each reconcile is due. It answers the two questions the
// loop asks at every step, the first reconcile due by now in (controller,
// name) order and the earliest time any is due, without looking through every
// entry: a fleet of thousands keeps thousands of requeued reconciles.
type dueQueue struct {
	at map[dueKey]time.Time
	// later holds (time, key) for every entry of at, and stale ones (the key
	// was set again or removed since), earliest first.
	later timedKeys
	// ready holds keys whose time had come when first last looked, smallest
	// first; they too may be stale.
	ready readyKeys
}

func newDueQueue() *dueQueue { return &dueQueue{at: map[dueKey]time.Time{}} }

// set makes key due at t, replacing when it was due before.
func (q *dueQueue) set(key dueKey, t time.Time) {
	q.at[key] = t
	heap.Push(&q.later, timedKey{t, key})
}

func (q *dueQueue) remove(key dueKey) { delete(q.at, key) }

// live reports whether an entry for key at t is the key's current one.
func (q *dueQueue) live(key dueKey, t time.Time) bool {
	cur, ok := q.at[key]
	return ok && cur.Equal(t)
}

// first is the smallest key due by now, or false.
func (q *dueQueue) first(now time.Time) (dueKey, bool) {
	for len(q.later) > 0 && !q.later[0].t.After(now) {
		e := heap.Pop(&q.later).(timedKey)
		if q.live(e.key, e.t) {
			heap.Push(&q.ready, e.key)
		}
	}
	for len(q.ready) > 0 {
		key := heap.Pop(&q.ready).(dueKey)
		if cur, ok := q.at[key]; ok && !cur.After(now) {
			return key, true
		}
	}
	return dueKey{}, false
}

// next is the earliest time any key is due, or false when none is.
func (q *dueQueue) next() (time.Time, bool) {
	for len(q.later) > 0 && !q.live(q.later[0].key, q.later[0].t) {
		heap.Pop(&q.later)
	}
	var next time.Time
	found := len(q.later) > 0
	if found {
		next = q.later[0].t
	}
	for _, key := range q.ready {
		if t, ok := q.at[key]; ok && (!found || t.Before(next)) {
			next, found = t, true
		}
	}
	return next, found
}

type timedKey struct {
	t   time.Time
	key dueKey
}

// timedKeys is a min-heap by time.
type timedKeys []timedKey

func (h timedKeys) Len() int           { return len(h) }
func (h timedKeys) Less(i, j int) bool { return h[i].t.Before(h[j].t) }
func (h timedKeys) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timedKeys) Push(x any)        { *h = append(*h, x.(timedKey)) }
func (h *timedKeys) Pop() any          { return pop((*[]timedKey)(h)) }

// readyKeys is a min-heap by controller, then name.
type readyKeys []dueKey

func (h readyKeys) Len() int { return len(h) }
func (h readyKeys) Less(i, j int) bool {
	return cmp.Or(cmp.Compare(h[i].ctl, h[j].ctl), cmp.Compare(h[i].name, h[j].name)) < 0
}
func (h readyKeys) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *readyKeys) Push(x any)   { *h = append(*h, x.(dueKey)) }
func (h *readyKeys) Pop() any     { return pop((*[]dueKey)(h)) }

func pop[T any](h *[]T) any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
