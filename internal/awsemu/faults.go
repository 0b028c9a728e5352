package awsemu

import "time"

// FaultKind is what an injected fault does to a request.
type FaultKind string

// Fault kinds.
const (
	// FaultThrottle answers with the service's throttling error (EC2 RequestLimitExceeded).
	FaultThrottle FaultKind = "throttle"
	// FaultServerError answers HTTP 500 InternalError.
	FaultServerError FaultKind = "server-error"
	// FaultLatency delays the answer by Delay on the emulator's clock.
	FaultLatency FaultKind = "latency"
	// FaultAccessDenied answers UnauthorizedOperation (EC2) or AccessDenied (others).
	FaultAccessDenied FaultKind = "access-denied"
	// FaultPartial makes CreateFleet launch at most Limit instances per call.
	FaultPartial FaultKind = "partial"
)

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
	// Message replaces the error message of a throttle, server-error or
	// access-denied fault (EC2, for one, often does not name the denied action).
	Message string
	hits    int
}

// Inject adds a fault; faults are consulted in the order they were added.
func (e *Emulator) Inject(f Fault) {
	e.mu.Lock()
	defer e.mu.Unlock()
	cp := f
	e.faults = append(e.faults, &cp)
}

// ClearFaults removes every injected fault.
func (e *Emulator) ClearFaults() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults = nil
}

// takeFaultLocked returns the first live fault of a request-level kind that
// matches action, counting the hit, or nil.
func (e *Emulator) takeFaultLocked(action string) *Fault {
	for _, f := range e.faults {
		if f.Kind == FaultPartial || (f.Action != "" && f.Action != action) {
			continue
		}
		if f.Times > 0 && f.hits >= f.Times {
			continue
		}
		if f.Probability > 0 && e.rnd.Float64() >= f.Probability {
			continue
		}
		f.hits++
		cp := *f
		return &cp
	}
	return nil
}

func (e *Emulator) partialLimitLocked() (int, bool) {
	for _, f := range e.faults {
		if f.Kind != FaultPartial || (f.Times > 0 && f.hits >= f.Times) {
			continue
		}
		f.hits++
		return f.Limit, true
	}
	return 0, false
}
