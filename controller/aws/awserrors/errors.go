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

// CodeReservationCapacityExceeded says a targeted capacity reservation is full.
const CodeReservationCapacityExceeded = "ReservationCapacityExceeded"

// quotaCodes mean the account's vCPU quota for the instance's class and market
// is used up: every type of that class fails alike until instances stop or the
// quota is raised.
var quotaCodes = map[string]bool{"VcpuLimitExceeded": true, "MaxSpotInstanceCountExceeded": true}

var launchTemplateNotFoundCodes = map[string]bool{
	"InvalidLaunchTemplateId.NotFound": true, "InvalidLaunchTemplateName.NotFoundException": true,
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

// IsQuotaCode reports whether an EC2 error code means a vCPU quota is used up.
func IsQuotaCode(code string) bool { return quotaCodes[code] }

// IsLaunchTemplateNotFound reports whether err says a launch template does not exist.
func IsLaunchTemplateNotFound(err error) bool { return launchTemplateNotFoundCodes[Code(err)] }

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

// IsUnauthorizedCode reports whether an error code (from an API error or a
// fleet's errorSet) means IAM denied the caller.
func IsUnauthorizedCode(code string) bool { return authCodes[code] && !credentialCodes[code] }

// IsUnauthorized reports whether err is an authorisation failure.
func IsUnauthorized(err error) bool { return authCodes[Code(err)] }

var actionPattern = regexp.MustCompile(`perform: ([a-z0-9-]+:[A-Za-z0-9]+)`)
