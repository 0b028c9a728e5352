// Package scheduledchange reads AWS Health events about scheduled changes to
// EC2 instances (retirements, maintenance, reboots).
package scheduledchange

// Detail is the detail of an AWS Health Event (schema aws.health@AWSHealthEvent,
// version 0), as far as the Lambda reads it.
type Detail struct {
	// Service is the affected service; only EC2 is read.
	Service string `json:"service"`
	// EventTypeCategory is issue, accountNotification, scheduledChange or
	// investigation; only scheduledChange is read.
	EventTypeCategory string `json:"eventTypeCategory"`
	// EventTypeCode names the change, e.g.
	// AWS_EC2_PERSISTENT_INSTANCE_RETIREMENT_SCHEDULED.
	EventTypeCode string `json:"eventTypeCode"`
	// StatusCode is open, upcoming or closed; a closed event is over.
	StatusCode string `json:"statusCode"`
	// StartTime is when the change starts, in RFC 1123 ("Thu, 1 Nov 2018
	// 22:00:00 GMT").
	StartTime string `json:"startTime"`
	// EndTime is when it ends; it may be absent.
	EndTime string `json:"endTime"`
	// AffectedEntities are the resources the change affects: instance ids
	// for EC2 instances, among others.
	AffectedEntities []Entity `json:"affectedEntities"`
}

// Entity is one affected resource. Older events carry entityValue and tags;
// newer ones add lastUpdatedTime and status, and may carry entityArn.
type Entity struct {
	// EntityValue is the resource's id: an instance id (or, for some event
	// types, an instance ARN) for an EC2 instance.
	EntityValue string `json:"entityValue"`
	// Status is PENDING, RESOLVED, IMPAIRED, UNIMPAIRED or UNKNOWN when set;
	// a RESOLVED entity is no longer affected.
	Status string `json:"status"`
}
