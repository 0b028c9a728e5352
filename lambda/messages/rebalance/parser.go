package rebalance

import (
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/lambda/messages"
)

// Parser reads rebalance recommendations.
type Parser struct{}

// Keys implements messages.Parser.
func (Parser) Keys() []messages.Key {
	return []messages.Key{{Source: "aws.ec2", DetailType: "EC2 Instance Rebalance Recommendation"}}
}

// Parse marks the instance rebalance-recommendation, with no deadline.
func (Parser) Parse(env messages.Envelope) (messages.Message, error) {
	var d Detail
	if err := messages.DecodeDetail(env, &d); err != nil {
		return messages.Message{}, err
	}
	id, err := messages.InstanceID("detail.instance-id", d.InstanceID)
	if err != nil {
		return messages.Message{}, err
	}
	return messages.Message{Kind: v1alpha1.InterruptionKindRebalanceRecommendation, InstanceIDs: []string{id}}, nil
}
