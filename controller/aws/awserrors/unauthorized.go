package awserrors

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/aws/smithy-go"
)

// ReasonUnauthorized is the condition reason for an authorisation failure.
const ReasonUnauthorized = "Unauthorized"

// credentialCodes mean AWS rejected the credentials, not one action.
var credentialCodes = map[string]bool{"AuthFailure": true, "UnrecognizedClientException": true, "InvalidClientTokenId": true}

// UnauthorizedError is an AWS authorisation failure: the controller's IAM
// identity may not perform Action. Its Message is written for a NodeClass or
// NodeClaim condition; the AWS error stays reachable through Unwrap.
type UnauthorizedError struct {
	// Action is the IAM action that was refused, e.g. ec2:CreateFleet.
	Action string
	// Resource is the ARN it was refused on, when AWS names one.
	Resource string
	// Code is AWS's error code: UnauthorizedOperation, AccessDenied, AccessDeniedException...
	Code string
	err  error
}

// AsUnauthorized returns err's UnauthorizedError: the one it wraps, or one built
// from an AWS authorisation failure it wraps; ok is false for any other error.
func AsUnauthorized(err error) (*UnauthorizedError, bool) {
	var ue *UnauthorizedError
	if errors.As(err, &ue) {
		return ue, true
	}
	if !IsUnauthorized(err) {
		return nil, false
	}
	var msg string
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		msg = apiErr.ErrorMessage()
	}
	return &UnauthorizedError{Action: MissingAction(err), Resource: deniedResource(msg), Code: Code(err), err: err}, true
}

// NewUnauthorized is the UnauthorizedError of an error AWS reports inside an
// answer rather than as the call's error, such as a fleet's: its code and
// message ("... is not authorized to perform: ec2:RunInstances on resource: ...").
func NewUnauthorized(code, message string) *UnauthorizedError {
	action := "an AWS action"
	if m := actionPattern.FindStringSubmatch(message); m != nil {
		action = m[1]
	}
	return &UnauthorizedError{Action: action, Resource: deniedResource(message), Code: code, err: errors.New(code + ": " + message)}
}

// deniedResource is the ARN a denial's message names, or "".
func deniedResource(message string) string {
	if m := resourcePattern.FindStringSubmatch(message); m != nil {
		return m[1]
	}
	return ""
}

var resourcePattern = regexp.MustCompile(`on resource: (\S+?)(?:\.? |$)`)

// WrapUnauthorized returns an UnauthorizedError for an authorisation failure and err otherwise.
func WrapUnauthorized(err error) error {
	if ue, ok := AsUnauthorized(err); ok {
		return ue
	}
	return err
}

func (e *UnauthorizedError) Error() string {
	if e.Resource != "" {
		return fmt.Sprintf("not authorized to perform %s on %s (%s)", e.Action, e.Resource, e.Code)
	}
	return fmt.Sprintf("not authorized to perform %s (%s)", e.Action, e.Code)
}

// Unwrap returns the AWS error.
func (e *UnauthorizedError) Unwrap() error { return e.err }

// Reason is the condition reason, ReasonUnauthorized.
func (e *UnauthorizedError) Reason() string { return ReasonUnauthorized }

// Message names the missing permission and what to do about it.
func (e *UnauthorizedError) Message() string {
	if credentialCodes[e.Code] {
		return fmt.Sprintf("AWS rejected the controller's credentials calling %s (%s); check its IAM role or Pod Identity association", e.Action, e.Code)
	}
	if e.Resource != "" {
		return fmt.Sprintf("missing IAM permission %s on %s (%s); allow it in the controller's IAM policy "+
			"(stowage_controller_policy or iampolicy.Controller generates one that does)", e.Action, e.Resource, e.Code)
	}
	return fmt.Sprintf("missing IAM permission %s (%s); allow it in the controller's IAM policy", e.Action, e.Code)
}

// Unauthorized lists every UnauthorizedError err holds, however joined.
func Unauthorized(err error) []*UnauthorizedError {
	var out []*UnauthorizedError
	var walk func(error)
	walk = func(err error) {
		if ue, ok := err.(*UnauthorizedError); ok { //nolint:errorlint // walking the tree by hand
			out = append(out, ue)
			return
		}
		switch x := err.(type) { //nolint:errorlint // walking the tree by hand
		case interface{ Unwrap() []error }:
			for _, e := range x.Unwrap() {
				walk(e)
			}
		case interface{ Unwrap() error }:
			walk(x.Unwrap())
		}
	}
	walk(err)
	if len(out) == 0 {
		if ue, ok := AsUnauthorized(err); ok {
			out = append(out, ue)
		}
	}
	return out
}

// MissingAction names the IAM action an authorisation failure is about: the one
// AWS names in its message ("... is not authorized to perform: ec2:CreateFleet"),
// else the SDK operation that failed (service and operation name).
func MissingAction(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		if m := actionPattern.FindStringSubmatch(apiErr.ErrorMessage()); m != nil {
			return m[1]
		}
	}
	var opErr *smithy.OperationError
	if errors.As(err, &opErr) {
		return strings.ToLower(strings.ReplaceAll(opErr.ServiceID, " ", "")) + ":" + opErr.OperationName
	}
	return "an AWS action"
}
