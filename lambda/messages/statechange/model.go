// Package statechange reads EC2 Instance State-change Notifications.
package statechange

// Detail is the detail of an EC2 Instance State-change Notification (schema
// aws.ec2@EC2InstanceStateChangeNotification, version 0).
type Detail struct {
	// InstanceID is the instance whose state changed.
	InstanceID string `json:"instance-id"`
	// State is the state it entered.
	State string `json:"state"`
}
