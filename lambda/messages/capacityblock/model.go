// Package capacityblock reads the expiration warning EC2 sends about a
// Capacity Block for ML 40 minutes before the block ends, after which EC2
// terminates the block's instances 30 minutes before the end.
package capacityblock

// Detail is the detail of a Capacity Block Reservation Expiration Warning
// (the EC2 User Guide's "Monitor Capacity Blocks using EventBridge"; no
// schema registry entry is published). It names the block and its end, not
// its instances.
type Detail struct {
	// CapacityReservationID is the block's id, cr-...
	CapacityReservationID string `json:"capacity-reservation-id"`
	// EndDate is the block's end, RFC 3339.
	EndDate string `json:"end-date"`
}
