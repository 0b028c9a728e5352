package cas

import "time"

// ActionKind names what the model did; the names follow CA's event reasons.
type ActionKind string

// Action kinds.
const (
	// ActionScaleUp is a successful launch: Count nodes of Group in Zone.
	ActionScaleUp ActionKind = "TriggeredScaleUp"
	// ActionScaleUpFailed is a shortfall in one zone: Count nodes not launched.
	ActionScaleUpFailed ActionKind = "FailedToScaleUpGroup"
	// ActionScaleUpTimedOut is a node not Ready within MaxNodeProvisionTime; it is removed.
	ActionScaleUpTimedOut ActionKind = "ScaleUpTimedOut"
	// ActionBackoff is a group backed off until Until.
	ActionBackoff ActionKind = "Backoff"
	// ActionNoScaleUp is Count pending pods no group could take this loop.
	ActionNoScaleUp ActionKind = "NotTriggerScaleUp"
	// ActionScaleDown is a node deleted; Count is the pods it evicted.
	ActionScaleDown ActionKind = "ScaleDown"
	// ActionScaleDownFailed is a deletion World.Remove refused.
	ActionScaleDownFailed ActionKind = "ScaleDownFailed"
)

// Action is one thing the model did in a loop, with its reason.
type Action struct {
	At    time.Time
	Kind  ActionKind
	Group string
	Zone  string
	// Node is set for scale-down and time-out actions.
	Node string
	// Count is nodes for scale-up actions, pods for NotTriggerScaleUp and ScaleDown.
	Count int
	// Until is when a backoff ends.
	Until  time.Time
	Reason string
}
