package cloudprovider

import (
	"errors"
	"fmt"
	"strings"
)

// UnavailableOffering names one (instance type, zone, capacity type) the cloud
// could not launch, with the cloud's reason.
type UnavailableOffering struct {
	InstanceType string
	Zone         string
	CapacityType string
	Reason       string
}

// InsufficientCapacityError says no offering a claim allows could be launched.
type InsufficientCapacityError struct {
	// Offerings are those tried that failed, in the order they were tried.
	Offerings []UnavailableOffering
	msg       string
}

// NewInsufficientCapacityError builds an InsufficientCapacityError.
func NewInsufficientCapacityError(msg string, offerings ...UnavailableOffering) *InsufficientCapacityError {
	return &InsufficientCapacityError{Offerings: offerings, msg: msg}
}

func (e *InsufficientCapacityError) Error() string {
	if len(e.Offerings) == 0 {
		return "insufficient capacity: " + e.msg
	}
	parts := make([]string, 0, len(e.Offerings))
	for _, o := range e.Offerings {
		parts = append(parts, fmt.Sprintf("%s/%s/%s (%s)", o.InstanceType, o.Zone, o.CapacityType, o.Reason))
	}
	return fmt.Sprintf("insufficient capacity: %s: %s", e.msg, strings.Join(parts, ", "))
}

// IsInsufficientCapacityError reports whether err is or wraps an InsufficientCapacityError.
func IsInsufficientCapacityError(err error) bool {
	var target *InsufficientCapacityError
	return errors.As(err, &target)
}

// IgnoreInsufficientCapacityError returns nil for an InsufficientCapacityError and err otherwise.
func IgnoreInsufficientCapacityError(err error) error {
	if IsInsufficientCapacityError(err) {
		return nil
	}
	return err
}

// NodeClaimNotFoundError says the instance behind a claim or provider id does not exist.
type NodeClaimNotFoundError struct{ err error }

// NewNodeClaimNotFoundError wraps err as a NodeClaimNotFoundError.
func NewNodeClaimNotFoundError(err error) *NodeClaimNotFoundError {
	return &NodeClaimNotFoundError{err: err}
}

func (e *NodeClaimNotFoundError) Error() string { return "nodeclaim not found: " + errText(e.err) }

// Unwrap returns the cause.
func (e *NodeClaimNotFoundError) Unwrap() error { return e.err }

// IsNodeClaimNotFoundError reports whether err is or wraps a NodeClaimNotFoundError.
func IsNodeClaimNotFoundError(err error) bool {
	var target *NodeClaimNotFoundError
	return errors.As(err, &target)
}

// IgnoreNodeClaimNotFoundError returns nil for a NodeClaimNotFoundError and err otherwise.
func IgnoreNodeClaimNotFoundError(err error) error {
	if IsNodeClaimNotFoundError(err) {
		return nil
	}
	return err
}

// NodeClassNotReadyError says a claim's NodeClass has not resolved yet.
type NodeClassNotReadyError struct{ err error }

// NewNodeClassNotReadyError wraps err as a NodeClassNotReadyError.
func NewNodeClassNotReadyError(err error) *NodeClassNotReadyError {
	return &NodeClassNotReadyError{err: err}
}

func (e *NodeClassNotReadyError) Error() string { return "nodeclass not ready: " + errText(e.err) }

// Unwrap returns the cause.
func (e *NodeClassNotReadyError) Unwrap() error { return e.err }

// IsNodeClassNotReadyError reports whether err is or wraps a NodeClassNotReadyError.
func IsNodeClassNotReadyError(err error) bool {
	var target *NodeClassNotReadyError
	return errors.As(err, &target)
}

// IgnoreNodeClassNotReadyError returns nil for a NodeClassNotReadyError and err otherwise.
func IgnoreNodeClassNotReadyError(err error) error {
	if IsNodeClassNotReadyError(err) {
		return nil
	}
	return err
}

// CreateError is a launch failure that is neither a shortage nor an unready
// NodeClass; Reason and Message are meant for the NodeClaim's Launched condition.
type CreateError struct {
	err     error
	Reason  string
	Message string
}

// NewCreateError wraps err with a condition reason and message.
func NewCreateError(err error, reason, message string) *CreateError {
	return &CreateError{err: err, Reason: reason, Message: message}
}

func (e *CreateError) Error() string { return "creating nodeclaim: " + errText(e.err) }

// Unwrap returns the cause.
func (e *CreateError) Unwrap() error { return e.err }

// IsCreateError reports whether err is or wraps a CreateError.
func IsCreateError(err error) bool {
	var target *CreateError
	return errors.As(err, &target)
}

// IgnoreCreateError returns nil for a CreateError and err otherwise.
func IgnoreCreateError(err error) error {
	if IsCreateError(err) {
		return nil
	}
	return err
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
