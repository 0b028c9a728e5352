package instance

import "sync"

// maxRefills bounds how many claims refills remembers; past it, it starts
// over (a claim forgotten asks its last failed fleet's token once more, and
// EC2 repeats that answer).
const maxRefills = 4096

// refills counts, per claim, the fleets that launched nothing. EC2 answers a
// repeated client token with its first answer, so a claim whose fleet found
// no capacity must ask under a new token when it asks for the same offerings
// again; a fleet whose answer never arrived keeps its token, so that asking
// again returns the instance it may have started. The count lives in memory:
// after a restart a claim may be told once more what it was told before.
type refills struct {
	mu sync.Mutex
	// claim -> fleets that launched nothing
	counts map[string]int
}

func (r *refills) count(claim string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts[claim]
}

func (r *refills) add(claim string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.counts) >= maxRefills {
		clear(r.counts)
	}
	r.counts[claim]++
}

func (r *refills) forget(claim string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.counts, claim)
}
