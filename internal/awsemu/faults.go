package awsemu

import (
	"fmt"
	"math/rand"
	"time"
)

// FaultKind is what an injected fault does to a request. Each answers as AWS
// does on the wire, so that the real SDK's retryer and error decoding meet
// it as they would in an account:
//
//   - throttle: EC2's RequestLimitExceeded, HTTP 503 (IAM's Throttling, the
//     JSON services' ThrottlingException or RequestThrottled, HTTP 400), which
//     the SDK's retryer backs off from and retries;
//   - server-error: InternalError, HTTP 500; unavailable: Unavailable
//     ("The server is overloaded"), HTTP 503: transient server errors the
//     retryer retries;
//   - latency: the answer comes Delay late, on the emulator's clock;
//   - access-denied: UnauthorizedOperation (EC2), AccessDenied (IAM) or
//     AccessDeniedException, HTTP 403;
//   - insufficient-capacity: an instant CreateFleet succeeds (HTTP 200) but
//     launches nothing: every override it tries is in the errorSet with
//     InsufficientInstanceCapacity, as when EC2 runs out for the request
//     whatever the pool showed a moment before;
//   - partial: an instant CreateFleet fulfils the request only in part: the
//     first override it tries is in the errorSet with
//     InsufficientInstanceCapacity and the fleet goes on with the others, so
//     that one answer lists both errors and instances; with Limit > 0 it
//     also launches at most Limit instances.
type FaultKind string

// Fault kinds.
const (
	FaultThrottle             FaultKind = "throttle"
	FaultServerError          FaultKind = "server-error"
	FaultUnavailable          FaultKind = "unavailable"
	FaultLatency              FaultKind = "latency"
	FaultAccessDenied         FaultKind = "access-denied"
	FaultInsufficientCapacity FaultKind = "insufficient-capacity"
	FaultPartial              FaultKind = "partial"
)

// fleetKinds are the kinds that shape a CreateFleet's result rather than
// answer the request in place of the service.
func fleetKind(k FaultKind) bool { return k == FaultPartial || k == FaultInsufficientCapacity }

// Fault is an injected failure. Matching requests are those for Action (every
// action when empty); Times bounds how many it affects (0: until cleared), and
// Probability (0 meaning always) draws from the emulator's seeded source.
type Fault struct {
	Action      string
	Kind        FaultKind
	Times       int
	Probability float64
	Delay       time.Duration
	Limit       int
	// Message replaces the error message of a throttle, server-error,
	// unavailable or access-denied fault (EC2, for one, often does not name
	// the denied action).
	Message string
	hits    int
}

// FaultPlan is a seeded mix of faults, for soaks: each request draws, from
// the plan's own source seeded with Seed, whether each rule whose Action
// matches it (every action when empty) hits it, with the rule's Probability;
// the first that hits wins. CreateFleet draws its fleet kinds (partial,
// insufficient-capacity) a second time, when it runs. Times is ignored. The
// same seed and the same order of requests give the same faults.
type FaultPlan struct {
	Seed  int64
	Rules []Fault
}

// faultState is what the emulator holds of faults: those injected one by
// one, the plan, and how many of each kind have hit.
type faultState struct {
	injected []*Fault
	plan     []Fault
	planRnd  *rand.Rand
	// kind -> faults that hit a request
	hits map[FaultKind]int
}

// Inject adds a fault; faults are consulted in the order they were added,
// before the plan's.
func (e *Emulator) Inject(f Fault) {
	e.mu.Lock()
	defer e.mu.Unlock()
	cp := f
	e.faults.injected = append(e.faults.injected, &cp)
}

// SetFaultPlan installs a plan in place of the last one.
func (e *Emulator) SetFaultPlan(p FaultPlan) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults.plan = append([]Fault(nil), p.Rules...)
	e.faults.planRnd = rand.New(rand.NewSource(p.Seed)) //nolint:gosec // a fault plan, not a secret
}

// ClearFaults removes every injected fault and the plan.
func (e *Emulator) ClearFaults() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults.injected, e.faults.plan = nil, nil
}

// FaultsInjected counts the faults that have hit a request so far, by kind,
// whether injected or drawn from a plan.
func (e *Emulator) FaultsInjected() map[FaultKind]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[FaultKind]int, len(e.faults.hits))
	for k, n := range e.faults.hits {
		out[k] = n
	}
	return out
}

// takeFaultLocked returns the first live fault of a request-level kind that
// matches action, counting the hit, or nil.
func (e *Emulator) takeFaultLocked(action string) *Fault {
	return e.drawLocked(action, func(k FaultKind) bool { return !fleetKind(k) })
}

// drawLocked finds the fault of a wanted kind that hits a request for
// action: an injected one, else one of the plan's.
func (e *Emulator) drawLocked(action string, want func(FaultKind) bool) *Fault {
	for _, f := range e.faults.injected {
		if !want(f.Kind) || (f.Action != "" && f.Action != action) || (f.Times > 0 && f.hits >= f.Times) {
			continue
		}
		if f.Probability > 0 && e.rnd.Float64() >= f.Probability {
			continue
		}
		f.hits++
		return e.hitLocked(*f)
	}
	for _, f := range e.faults.plan {
		if !want(f.Kind) || (f.Action != "" && f.Action != action) {
			continue
		}
		if e.faults.planRnd.Float64() < f.Probability {
			return e.hitLocked(f)
		}
	}
	return nil
}

func (e *Emulator) hitLocked(f Fault) *Fault {
	if e.faults.hits == nil {
		e.faults.hits = map[FaultKind]int{}
	}
	e.faults.hits[f.Kind]++
	return &f
}

// fleetFaultLocked draws the fleet fault, if any, of a CreateFleet about to
// run: how many instances it may launch at most, and which of the overrides,
// by the order the fleet tries them, answer InsufficientInstanceCapacity.
func (e *Emulator) fleetFaultLocked(target int) (remaining int, refused func(tried int) bool) {
	f := e.drawLocked("CreateFleet", fleetKind)
	switch {
	case f == nil:
		return target, func(int) bool { return false }
	case f.Kind == FaultInsufficientCapacity:
		return target, func(int) bool { return true }
	case f.Limit > 0:
		return min(target, f.Limit), func(tried int) bool { return tried == 0 }
	default:
		return target, func(tried int) bool { return tried == 0 }
	}
}

// refusedLocked is the errorSet entry of an override a fleet fault refused.
func (e *Emulator) refusedLocked(o FleetOverride, lifecycle string) FleetError {
	return *fleetErr(o, lifecycle, CodeInsufficientCapacity,
		fmt.Sprintf("We currently do not have sufficient %s capacity in the Availability Zone you requested (%s).", o.InstanceType, e.overrideZoneLocked(o)))
}
