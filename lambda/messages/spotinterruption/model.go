// Package spotinterruption reads EC2 Spot Instance Interruption Warnings.
package spotinterruption

// Detail is the detail of an EC2 Spot Instance Interruption Warning
// (schema aws.ec2@EC2SpotInstanceInterruptionWarning, version 0).
type Detail struct {
	// InstanceID is the spot instance EC2 reclaims.
	InstanceID string `json:"instance-id"`
	// InstanceAction is what EC2 does to it: terminate, stop or hibernate.
	InstanceAction string `json:"instance-action"`
}
