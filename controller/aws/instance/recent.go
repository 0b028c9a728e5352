package instance

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/stowage-dev/stowage/controller/cloudprovider"
)

// DefaultConsistencyWindow is how long after a launch an instance EC2 says
// it does not know may still exist. EC2's reads lag its writes (the Amazon
// EC2 API's "Eventual consistency": DescribeInstances and TerminateInstances
// may answer InvalidInstanceID.NotFound for an instance just launched, and
// a NotFound from TerminateInstances does not mean it was terminated); AWS
// bounds it nowhere and advises retrying "up to a few minutes".
const DefaultConsistencyWindow = 5 * time.Minute

// NotVisibleError says EC2 does not show an instance launched less than the
// consistency window ago: it may be running all the same, so it is not gone.
type NotVisibleError struct {
	ID string
	// Since is how long ago it was launched.
	Since time.Duration
}

func (e *NotVisibleError) Error() string {
	return fmt.Sprintf("instance %s, launched %s ago, is not visible to EC2's API yet", e.ID, e.Since.Round(time.Second))
}

// IsNotVisible reports whether err is or wraps a NotVisibleError.
func IsNotVisible(err error) bool {
	var target *NotVisibleError
	return errors.As(err, &target)
}

// recentLaunches are this process's launches of the last window: a claim's
// instance while EC2 may not list it yet, and when each was launched.
type recentLaunches struct {
	mu sync.Mutex
	// claim name -> the instance launched for it
	byClaim map[string]recentLaunch
	// instance id -> when it was launched
	at map[string]time.Time
}

type recentLaunch struct {
	instance Instance
	at       time.Time
}

func newRecentLaunches() recentLaunches {
	return recentLaunches{byClaim: map[string]recentLaunch{}, at: map[string]time.Time{}}
}

// add records a launch and forgets those older than window.
func (r *recentLaunches) add(claim string, in Instance, now time.Time, window time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, l := range r.byClaim {
		if now.Sub(l.at) >= window {
			delete(r.byClaim, name)
			delete(r.at, l.instance.ID)
		}
	}
	r.byClaim[claim] = recentLaunch{instance: in, at: now}
	r.at[in.ID] = now
}

// forClaim returns the instance launched for the claim less than window ago.
func (r *recentLaunches) forClaim(claim string, now time.Time, window time.Duration) (*Instance, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l, ok := r.byClaim[claim]
	if !ok || now.Sub(l.at) >= window {
		return nil, false
	}
	in := l.instance
	return &in, true
}

// launchedAt is when this process launched the instance, if it did lately.
func (r *recentLaunches) launchedAt(id string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at, ok := r.at[id]
	return at, ok
}

// Remember records that the claim's instance was just launched (image
// included, which CreateFleet's answer does not give), so that, for the
// consistency window, FindByClaim finds it while EC2 does not list it, and
// Get and Terminate do not take EC2's NotFound for it as gone.
func (p *Provider) Remember(claim string, in *Instance) {
	p.recent.add(claim, *in, p.clk.Now(), p.window)
}

// unknown is the error for an instance EC2 says it does not know: a
// NotVisibleError when it was launched less than the window ago (by this
// process, or at launched as the caller knows from a claim's Launched
// condition), a NodeClaimNotFoundError wrapping cause otherwise.
func (p *Provider) unknown(id string, launched time.Time, cause error) error {
	if at, ok := p.recent.launchedAt(id); ok && at.After(launched) {
		launched = at
	}
	if since := p.clk.Since(launched); !launched.IsZero() && since < p.window {
		return &NotVisibleError{ID: id, Since: since}
	}
	return cloudprovider.NewNodeClaimNotFoundError(cause)
}
