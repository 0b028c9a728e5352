package capacityreservation

import (
	"time"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/lambda/messages"
)

// Notice is how long after the warning the instance goes when the event
// names no termination time.
const Notice = 2 * time.Minute

// Parser reads capacity reservation interruption warnings.
type Parser struct{}

// Keys implements messages.Parser. The EC2 User Guide and Karpenter use
// the first detail-type; a copy of the same guide page spells it with
// "Interruptible", so both are read.
func (Parser) Keys() []messages.Key {
	return []messages.Key{
		{Source: "aws.ec2", DetailType: "EC2 Capacity Reservation Instance Interruption Warning"},
		{Source: "aws.ec2", DetailType: "EC2 Interruptible Capacity Reservation Instance Interruption Warning"},
	}
}

// Parse marks the instance capacity-reservation-interruption, due at the
// termination time the detail names, or two minutes after the warning.
func (Parser) Parse(env messages.Envelope) (messages.Message, error) {
	var d Detail
	if err := messages.DecodeDetail(env, &d); err != nil {
		return messages.Message{}, err
	}
	id, err := messages.InstanceID("detail.instance-id", d.InstanceID)
	if err != nil {
		return messages.Message{}, err
	}
	var deadline time.Time
	if d.InstanceTerminationTime != "" {
		deadline, err = messages.RFC3339("detail.instance-termination-time", d.InstanceTerminationTime)
	} else {
		deadline, err = messages.EventTime(env)
		deadline = deadline.Add(Notice)
	}
	if err != nil {
		return messages.Message{}, err
	}
	return messages.Message{Kind: v1alpha1.InterruptionKindCapacityReservationInterruption, Deadline: deadline,
		InstanceIDs: []string{id}}, nil
}
