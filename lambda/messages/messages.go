// Package messages reads the EventBridge events of the interruption queue:
// the envelope first, then the detail by (source, detail-type), each kind
// in its own folder with a Parser. A Message says which instances to mark
// with which interruption kind and deadline; an event the Lambda need not
// act on parses into a Message without a kind.
//
// Parsing is tolerant of unknown fields and strict on the ones it needs:
// every error is a *FieldError that names the field and what is wrong.
package messages

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Envelope is the EventBridge event envelope (version "0"), with the detail
// left raw for the kind's parser.
type Envelope struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Account    string          `json:"account"`
	Time       string          `json:"time"`
	Region     string          `json:"region"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

// Message is what one event asks of the Lambda.
type Message struct {
	// EventID is the envelope's id; the mark carries it, so that a
	// redelivered event changes nothing.
	EventID string
	// Source and DetailType are the envelope's, for logs.
	Source, DetailType string
	// Kind is the v1alpha1 interruption kind to mark the Nodes with; empty
	// when the event asks for nothing (Reason says why).
	Kind string
	// Deadline is when the instances are expected to go; zero when the
	// event names no time.
	Deadline time.Time
	// InstanceIDs are the instances whose Nodes are marked: one for EC2
	// events, every affected instance of an AWS Health event.
	InstanceIDs []string
	// CapacityReservationID, when set, names a capacity reservation whose
	// Nodes are all marked (those labelled stowage.dev/capacity-reservation-id
	// with it): a Capacity Block's expiration warning names the block, not
	// its instances.
	CapacityReservationID string
	// Reason says, for a Message without a kind, why nothing is done.
	Reason string
}

// Parser reads the detail of one kind of event.
type Parser interface {
	// Keys are the (source, detail-type) pairs the parser reads.
	Keys() []Key
	// Parse reads env's detail into a Message; errors are *FieldError.
	Parse(env Envelope) (Message, error)
}

// Key picks a parser: the envelope's source and detail-type.
type Key struct {
	Source, DetailType string
}

// FieldError is a problem with one field of an event.
type FieldError struct {
	// Field is the JSON path of the field, e.g. detail.instance-id.
	Field string
	// Problem says what is wrong and what was expected.
	Problem string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }

// Fieldf returns a *FieldError for field.
func Fieldf(field, format string, args ...any) error {
	return &FieldError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

// UnknownError is an event no parser reads: acknowledged, not failed.
type UnknownError struct {
	Key
}

func (e *UnknownError) Error() string {
	return fmt.Sprintf("no parser for source %q and detail-type %q", e.Source, e.DetailType)
}

// IsUnknown reports whether err is an *UnknownError.
func IsUnknown(err error) bool {
	var u *UnknownError
	return errors.As(err, &u)
}
