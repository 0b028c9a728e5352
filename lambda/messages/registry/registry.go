// Package registry assembles the parsers of every kind of interruption event.
package registry

import (
	"github.com/stowage-dev/stowage/lambda/messages"
	"github.com/stowage-dev/stowage/lambda/messages/capacityblock"
	"github.com/stowage-dev/stowage/lambda/messages/capacityreservation"
	"github.com/stowage-dev/stowage/lambda/messages/rebalance"
	"github.com/stowage-dev/stowage/lambda/messages/scheduledchange"
	"github.com/stowage-dev/stowage/lambda/messages/spotinterruption"
	"github.com/stowage-dev/stowage/lambda/messages/statechange"
)

// New returns a registry of every kind the Lambda reads.
func New() *messages.Registry {
	r, err := messages.NewRegistry(spotinterruption.Parser{}, rebalance.Parser{}, statechange.Parser{},
		scheduledchange.Parser{}, capacityreservation.Parser{}, capacityblock.Parser{})
	if err != nil {
		panic(err) // the kinds above claim distinct keys; a clash is a programming error caught by the tests
	}
	return r
}
