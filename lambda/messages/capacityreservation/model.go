// Package capacityreservation reads EC2 Capacity Reservation Instance
// Interruption Warnings: the owner of an interruptible capacity reservation
// (or the end of a Capacity Block) takes the instance's capacity back.
package capacityreservation

// Detail is the detail of an EC2 Capacity Reservation Instance Interruption
// Warning (schema aws.ec2@EC2CapacityReservationInstanceInterruptionWarning,
// version 0, from the EC2 User Guide's "Monitor interruptible Capacity
// Reservations"). The zone comes as azId for interruptible reservations and
// availability-zone-id for Capacity Blocks; neither is needed.
type Detail struct {
	// InstanceID is the instance whose capacity is taken back.
	InstanceID string `json:"instance-id"`
	// InstanceAction is what EC2 does to it (terminate).
	InstanceAction string `json:"instance-action"`
	// InstanceTerminationTime is when, RFC 3339; it may be absent.
	InstanceTerminationTime string `json:"instance-termination-time"`
	// InstanceLifecycle is capacity-block for a Capacity Block.
	InstanceLifecycle string `json:"instance-lifecycle"`
}
