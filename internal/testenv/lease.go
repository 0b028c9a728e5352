package testenv

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// LeaseState is one state of a leader-election Lease, as a watch delivered it.
type LeaseState struct {
	// Holder is the holder's identity; empty once the holder released the lease.
	Holder         string
	Acquire, Renew time.Time
	Duration       time.Duration
}

// LeaseHistory records every state of one Lease from the moment WatchLease
// is called, for leader-election tests to judge the handovers.
type LeaseHistory struct {
	mu     sync.Mutex
	states []LeaseState
}

// WatchLease records the states of Lease namespace/name until ctx ends; the
// Lease need not exist yet.
func WatchLease(ctx context.Context, cfg *rest.Config, namespace, name string) (*LeaseHistory, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the lease client: %w", err)
	}
	leases := cs.CoordinationV1().Leases(namespace)
	selector := fields.OneTermEqualSelector("metadata.name", name).String()
	list, err := leases.List(ctx, metav1.ListOptions{FieldSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("listing lease %s/%s: %w", namespace, name, err)
	}
	h := &LeaseHistory{}
	for i := range list.Items {
		h.add(&list.Items[i])
	}
	w, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = selector
			return leases.Watch(ctx, o)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("watching lease %s/%s: %w", namespace, name, err)
	}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			if l, ok := ev.Object.(*coordinationv1.Lease); ok && ev.Type != watch.Deleted {
				h.add(l)
			}
		}
	}()
	return h, nil
}

func (h *LeaseHistory) add(l *coordinationv1.Lease) {
	s := LeaseState{}
	if l.Spec.HolderIdentity != nil {
		s.Holder = *l.Spec.HolderIdentity
	}
	if l.Spec.AcquireTime != nil {
		s.Acquire = l.Spec.AcquireTime.Time
	}
	if l.Spec.RenewTime != nil {
		s.Renew = l.Spec.RenewTime.Time
	}
	if l.Spec.LeaseDurationSeconds != nil {
		s.Duration = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.states = append(h.states, s)
}

// Handover is one change of the Lease's holder.
type Handover struct {
	From, To string
	// Released says that From gave the lease up rather than letting it expire.
	Released bool
	// Gap is from From's last renewal (or its release) to To's acquisition.
	Gap time.Duration
	// Early is set when To acquired the lease while From's term still ran:
	// before From's last renewal plus its lease duration, less the second
	// by which candidates see renewals (recordPrecision), without a release.
	Early bool
}

// recordPrecision is how finely client-go's candidates see renewals: they
// compare the Lease as a LeaderElectionRecord marshalled to JSON, whose
// times are metav1.Time at whole seconds, so a renewal in the same second as
// the last one a candidate saw changes nothing for it, and its term runs
// from the one it saw. With sub-second retry periods a candidate may take
// the lease up to a second before the last renewal's term ends, by client-go's
// design: the leader has stopped by then, its renew deadline being shorter.
const recordPrecision = time.Second

// Handovers returns every change of holder recorded so far, in order.
func (h *LeaseHistory) Handovers() []Handover {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Handover
	var last *LeaseState // the last state of the current holder
	released := false
	for i := range h.states {
		s := &h.states[i]
		switch {
		case s.Holder == "":
			if last != nil {
				released, last = true, &LeaseState{Holder: last.Holder, Renew: s.Renew}
			}
		case last == nil || s.Holder == last.Holder:
			last, released = s, false
		default:
			gap := s.Acquire.Sub(last.Renew)
			out = append(out, Handover{From: last.Holder, To: s.Holder, Released: released, Gap: gap,
				Early: !released && gap < last.Duration-recordPrecision})
			last, released = s, false
		}
	}
	return out
}

// Holder returns the holder of the latest state recorded, empty when none.
func (h *LeaseHistory) Holder() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.states) == 0 {
		return ""
	}
	return h.states[len(h.states)-1].Holder
}

// Exclusive returns an error naming every handover in which the new holder
// took the lease while the old holder's term still ran: two leaders at once.
func (h *LeaseHistory) Exclusive() error {
	var errs []error
	for _, ho := range h.Handovers() {
		if ho.Early {
			errs = append(errs, fmt.Errorf("%s acquired the lease %s after %s's last renewal, inside its term", ho.To, ho.Gap, ho.From))
		}
	}
	return errors.Join(errs...)
}
