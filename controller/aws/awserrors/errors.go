// Package awserrors sorts AWS API errors by what Stowage does about them:
// not found, short of capacity, throttled, or not authorised.
package awserrors

import (
	"errors"
	"regexp"

	"github.com/aws/smithy-go"
)

// Capacity error codes: EC2 could not place the instance in that offering.
var capacityCodes = map[string]bool{
	"InsufficientInstanceCapacity":      true,
	"MaxSpotInstanceCountExceeded":      true,
	"UnfulfillableCapacity":             true,
	"InsufficientFreeAddressesInSubnet": true,
	"VcpuLimitExceeded":                 true,
	"InsufficientCapacity":              true,
	"SpotMaxPriceTooLow":                true,
	"InsufficientHostCapacity":          true,
	"ReservationCapacityExceeded":       true,
}

var notFoundCodes = map[string]bool{
	"InvalidInstanceID.NotFound":                  true,
	"InvalidLaunchTemplateId.NotFound":            true,
	"InvalidLaunchTemplateName.NotFoundException": true,
	"NoSuchEntity":                                true,
	"ParameterNotFound":                           true,
	"QueueDoesNotExist":                           true,
	"AWS.SimpleQueueService.NonExistentQueue":     true,
}

var authCodes = map[string]bool{
	"UnauthorizedOperation": true, "AccessDenied": true, "AccessDeniedException": true,
	"AuthFailure": true, "UnrecognizedClientException": true, "InvalidClientTokenId": true,
}

var throttleCodes = map[string]bool{
	"RequestLimitExceeded": true, "Throttling": true, "ThrottlingException": true,
	"RequestThrottled": true, "TooManyRequestsException": true,
}

// Code returns the API error code of err, or "".
func Code(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}

// IsCapacityCode reports whether an EC2 error code (from an API error or a
// fleet's errorSet) means the offering is short of capacity.
func IsCapacityCode(code string) bool { return capacityCodes[code] }

// IsNotFound reports whether err says the resource does not exist.
func IsNotFound(err error) bool { return notFoundCodes[Code(err)] }

// IgnoreNotFound returns nil when err is a not-found error.
func IgnoreNotFound(err error) error {
	if IsNotFound(err) {
		return nil
	}
	return err
}

// IsThrottled reports whether err is a throttling error (after the SDK's retries).
func IsThrottled(err error) bool { return throttleCodes[Code(err)] }

// IsUnauthorized reports whether err is an authorisation failure.
func IsUnauthorized(err error) bool { return authCodes[Code(err)] }

var actionPattern = regexp.MustCompile(`perform: ([a-z0-9-]+:[A-Za-z0-9]+)`)

// MissingAction names the IAM action an authorisation failure is about, from
// the error message when AWS names it there, else from the operation that failed.
func MissingAction(err error, service, operation string) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		if m := actionPattern.FindStringSubmatch(apiErr.ErrorMessage()); m != nil {
			return m[1]
		}
	}
	return service + ":" + operation
}
