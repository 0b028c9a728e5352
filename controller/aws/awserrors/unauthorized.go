package awserrors

import (
	"errors"
	"fmt"
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
	return &UnauthorizedError{Action: MissingAction(err), Code: Code(err), err: err}, true
}

// WrapUnauthorized returns an UnauthorizedError for an authorisation failure and err otherwise.
func WrapUnauthorized(err error) error {
	if ue, ok := AsUnauthorized(err); ok {
		return ue
	}
	return err
}

func (e *UnauthorizedError) Error() string {
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
	return fmt.Sprintf("missing IAM permission %s (%s); allow it in the controller's IAM policy", e.Action, e.Code)
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
