package awserrors

import "errors"

// CodeSpotRoleNotPermitted is EC2's answer to a spot launch in an account
// without the spot service-linked role (AWSServiceRoleForEC2Spot), which EC2
// would create on the first spot launch but the caller may not.
const CodeSpotRoleNotPermitted = "AuthFailure.ServiceLinkedRoleCreationNotPermitted"

// ReasonSpotRoleMissing is the condition reason for it.
const ReasonSpotRoleMissing = "SpotServiceLinkedRoleMissing"

// SpotRoleError is a spot launch refused for want of the spot
// service-linked role; its Message is written for a NodeClaim condition.
type SpotRoleError struct{ msg string }

// NewSpotRoleError is the error of a fleet's CodeSpotRoleNotPermitted entry.
func NewSpotRoleError(message string) *SpotRoleError { return &SpotRoleError{msg: message} }

func (e *SpotRoleError) Error() string { return CodeSpotRoleNotPermitted + ": " + e.msg }

// Reason is the condition reason, ReasonSpotRoleMissing.
func (e *SpotRoleError) Reason() string { return ReasonSpotRoleMissing }

// Message says what is missing and the fix.
func (e *SpotRoleError) Message() string {
	return "the account has no spot service-linked role (AWSServiceRoleForEC2Spot) and the controller may not create it; " +
		"create it once with `aws iam create-service-linked-role --aws-service-name spot.amazonaws.com`, or set " +
		"modules/stowage's create_spot_service_linked_role = true (stowage_spot_service_linked_role); spot launches wait until then"
}

// AsSpotRole returns the SpotRoleError err holds, if any.
func AsSpotRole(err error) (*SpotRoleError, bool) {
	var se *SpotRoleError
	ok := errors.As(err, &se)
	return se, ok
}
