package awsemu

import (
	"fmt"
	"sort"
	"time"
)

// Instance states, with the codes EC2 reports for them.
const (
	StatePending      = "pending"
	StateRunning      = "running"
	StateShuttingDown = "shutting-down"
	StateTerminated   = "terminated"
)

var stateCodes = map[string]int{StatePending: 0, StateRunning: 16, StateShuttingDown: 32, StateTerminated: 48}

// Instance is one emulated EC2 instance.
type Instance struct {
	ID             string
	InstanceType   string
	Zone           string
	SubnetID       string
	VpcID          string
	CapacityType   string // CapacityOnDemand, CapacitySpot or CapacityBlock (its lifecycle)
	ImageID        string
	LaunchTemplate string // id of the template it was launched from
	SecurityGroups []string
	ProfileARN     string
	UserData       string
	HTTPTokens     string
	HopLimit       int32
	Tags           map[string]string
	ClientToken    string
	PrivateIP      string
	State          string
	LaunchTime     time.Time
	// StateSince is when the instance entered State.
	StateSince time.Time
	// InterruptAt is when a pending spot interruption terminates the instance.
	InterruptAt time.Time
	// ReservationID is the Capacity Reservation the instance runs in, if any.
	ReservationID string
	// SpotRequestID is a spot instance's spot request (sir-...), as EC2
	// opens one for each spot launch.
	SpotRequestID string
}

func (i *Instance) clone() Instance {
	cp := *i
	cp.Tags = cloneTags(i.Tags)
	cp.SecurityGroups = append([]string(nil), i.SecurityGroups...)
	return cp
}

func cloneTags(t map[string]string) map[string]string {
	out := make(map[string]string, len(t))
	for k, v := range t {
		out[k] = v
	}
	return out
}

// advanceLocked moves every instance through the states its timers allow at now.
// Capacity blocks (few) are checked on every call; no instance moves before
// quietUntil, so that most calls (every API call makes one) scan no
// instance: a scan of every instance on each call made a simulated fleet of
// 10,000 quadratic.
func (e *Emulator) advanceLocked() {
	now := e.clk.Now()
	e.advanceBlocksLocked(now)
	if now.Before(e.quietUntil) {
		return
	}
	for _, id := range e.order {
		e.advanceInstanceLocked(e.instances[id], now)
	}
	e.forgetTerminatedLocked(now)
	e.quietUntil = never
	for _, id := range e.order {
		e.wakeLocked(e.instances[id])
	}
}

// never is a time no clock reaches.
var never = time.Unix(1<<62, 0)

// wakeLocked moves quietUntil back to the instance's next timer, if it is sooner:
// its interruption, the end of its pending or shutting-down state, or its
// forgetting once terminated.
func (e *Emulator) wakeLocked(in *Instance) {
	next := never
	switch in.State {
	case StatePending:
		next = in.StateSince.Add(e.cfg.PendingDelay)
	case StateShuttingDown:
		next = in.StateSince.Add(e.cfg.ShuttingDownDelay)
	case StateTerminated:
		next = in.StateSince.Add(e.cfg.TerminatedRetention)
	}
	if !in.InterruptAt.IsZero() && in.State != StateTerminated && in.State != StateShuttingDown && in.InterruptAt.Before(next) {
		next = in.InterruptAt
	}
	if next.Before(e.quietUntil) {
		e.quietUntil = next
	}
}

func (e *Emulator) advanceInstanceLocked(in *Instance, now time.Time) {
	if !in.InterruptAt.IsZero() && !now.Before(in.InterruptAt) && in.State != StateTerminated && in.State != StateShuttingDown {
		e.setStateLocked(in, StateShuttingDown, in.InterruptAt)
	}
	if in.State == StatePending && !now.Before(in.StateSince.Add(e.cfg.PendingDelay)) {
		e.setStateLocked(in, StateRunning, in.StateSince.Add(e.cfg.PendingDelay))
	}
	if in.State == StateShuttingDown && !now.Before(in.StateSince.Add(e.cfg.ShuttingDownDelay)) {
		e.setStateLocked(in, StateTerminated, in.StateSince.Add(e.cfg.ShuttingDownDelay))
	}
}

func (e *Emulator) setStateLocked(in *Instance, state string, at time.Time) {
	prev := in.State
	in.State, in.StateSince = state, at
	e.wakeLocked(in)
	if state == StateShuttingDown {
		// The capacity goes back to its reservation or pool as soon as the instance stops.
		if r, ok := e.reservations[in.ReservationID]; ok {
			r.AvailableInstanceCount++
		} else if p, ok := e.pools[PoolKey{in.InstanceType, in.Zone, in.CapacityType}]; ok {
			p.Capacity++
		}
	}
	if prev != state {
		e.publishLocked(stateChangeEvent(e.cfg, in, at))
	}
}

func (e *Emulator) forgetTerminatedLocked(now time.Time) {
	kept := e.order[:0]
	for _, id := range e.order {
		in := e.instances[id]
		if in.State == StateTerminated && now.Sub(in.StateSince) >= e.cfg.TerminatedRetention {
			delete(e.instances, id)
			continue
		}
		kept = append(kept, id)
	}
	e.order = kept
}

// Instances returns every instance still visible (terminated ones for
// TerminatedRetention), in launch order, after advancing their states. It is
// the emulator's own view: Config.VisibilityDelay hides nothing from it.
func (e *Emulator) Instances() []Instance {
	return e.instancesWhere(func(*Instance) bool { return true })
}

// instancesWhere returns copies of the instances that pass keep, in launch
// order; only those are copied. keep is called with the lock held.
func (e *Emulator) instancesWhere(keep func(*Instance) bool) []Instance {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advanceLocked()
	var out []Instance
	for _, id := range e.order {
		if in := e.instances[id]; keep(in) {
			out = append(out, in.clone())
		}
	}
	return out
}

// visibleLocked reports whether EC2's API knows the instance yet: a new one
// is unknown to DescribeInstances and TerminateInstances for
// Config.VisibilityDelay after its launch, as EC2's eventual consistency
// may hide it.
func (e *Emulator) visibleLocked(in *Instance) bool {
	return !e.clk.Now().Before(in.LaunchTime.Add(e.cfg.VisibilityDelay))
}

// Instance returns one instance by id.
func (e *Emulator) Instance(id string) (Instance, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advanceLocked()
	in, ok := e.instances[id]
	if !ok {
		return Instance{}, false
	}
	return in.clone(), true
}

// NotFoundError reports ids that the emulator does not know.
type NotFoundError struct{ IDs []string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("the instance IDs %v do not exist", e.IDs)
}

// StateChange is one instance's transition reported by Terminate.
type StateChange struct {
	ID       string
	Previous string
	Current  string
}

// Terminate starts shutting the instances down. Like EC2 it fails as a whole
// (with *NotFoundError) if any id is unknown, and is idempotent otherwise.
func (e *Emulator) Terminate(ids ...string) ([]StateChange, error) {
	return e.terminate(ids, func(*Instance) bool { return true })
}

// terminateVisible is TerminateInstances: an instance EC2 does not show yet
// (visibleLocked) is as unknown as one that never was.
func (e *Emulator) terminateVisible(ids []string) ([]StateChange, error) {
	return e.terminate(ids, e.visibleLocked)
}

func (e *Emulator) terminate(ids []string, visible func(*Instance) bool) ([]StateChange, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advanceLocked()
	var missing []string
	for _, id := range ids {
		if in, ok := e.instances[id]; !ok || !visible(in) {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, &NotFoundError{IDs: missing}
	}
	now := e.clk.Now()
	changes := make([]StateChange, 0, len(ids))
	for _, id := range ids {
		in := e.instances[id]
		prev := in.State
		if prev == StatePending || prev == StateRunning {
			e.setStateLocked(in, StateShuttingDown, now)
		}
		e.advanceInstanceLocked(in, now)
		changes = append(changes, StateChange{ID: id, Previous: prev, Current: in.State})
	}
	return changes, nil
}
