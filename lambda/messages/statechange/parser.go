package statechange

import (
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/lambda/messages"
)

// States an instance enters, and the kind each marks ("" for none).
var States = map[string]string{
	"pending":       "",
	"running":       "",
	"stopping":      v1alpha1.InterruptionKindInstanceStopping,
	"stopped":       v1alpha1.InterruptionKindInstanceStopping,
	"shutting-down": v1alpha1.InterruptionKindInstanceTerminating,
	"terminated":    v1alpha1.InterruptionKindInstanceTerminating,
}

// stateNames lists States' keys in lifecycle order, for errors.
var stateNames = []string{"pending", "running", "stopping", "stopped", "shutting-down", "terminated"}

// Parser reads state-change notifications.
type Parser struct{}

// Keys implements messages.Parser.
func (Parser) Keys() []messages.Key {
	return []messages.Key{{Source: "aws.ec2", DetailType: "EC2 Instance State-change Notification"}}
}

// Parse marks a stopping or stopped instance instance-stopping, a shutting
// down or terminated one instance-terminating, without a deadline; pending
// and running ask for nothing.
func (Parser) Parse(env messages.Envelope) (messages.Message, error) {
	var d Detail
	if err := messages.DecodeDetail(env, &d); err != nil {
		return messages.Message{}, err
	}
	id, err := messages.InstanceID("detail.instance-id", d.InstanceID)
	if err != nil {
		return messages.Message{}, err
	}
	if err := messages.OneOf("detail.state", d.State, stateNames...); err != nil {
		return messages.Message{}, err
	}
	kind := States[d.State]
	if kind == "" {
		return messages.Message{InstanceIDs: []string{id}, Reason: "the instance is " + d.State}, nil
	}
	return messages.Message{Kind: kind, InstanceIDs: []string{id}}, nil
}
