package spotinterruption

import (
	"time"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/lambda/messages"
)

// Notice is how long after the warning EC2 stops or terminates the instance.
const Notice = 2 * time.Minute

// Instance actions.
const (
	ActionTerminate = "terminate"
	ActionStop      = "stop"
	// ActionHibernate starts at once: a hibernating instance gets the
	// warning but not the two minutes.
	ActionHibernate = "hibernate"
)

// Parser reads spot interruption warnings.
type Parser struct{}

// Keys implements messages.Parser.
func (Parser) Keys() []messages.Key {
	return []messages.Key{{Source: "aws.ec2", DetailType: "EC2 Spot Instance Interruption Warning"}}
}

// Parse marks the instance spot-interruption, due two minutes after the
// warning (at the warning for a hibernation).
func (Parser) Parse(env messages.Envelope) (messages.Message, error) {
	var d Detail
	if err := messages.DecodeDetail(env, &d); err != nil {
		return messages.Message{}, err
	}
	id, err := messages.InstanceID("detail.instance-id", d.InstanceID)
	if err != nil {
		return messages.Message{}, err
	}
	if err := messages.OneOf("detail.instance-action", d.InstanceAction, ActionTerminate, ActionStop, ActionHibernate); err != nil {
		return messages.Message{}, err
	}
	at, err := messages.EventTime(env)
	if err != nil {
		return messages.Message{}, err
	}
	if d.InstanceAction != ActionHibernate {
		at = at.Add(Notice)
	}
	return messages.Message{Kind: v1alpha1.InterruptionKindSpotInterruption, Deadline: at, InstanceIDs: []string{id}}, nil
}
