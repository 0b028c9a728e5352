package capacityblock

import (
	"regexp"
	"time"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/lambda/messages"
)

// TerminationLead is how long before a block's end EC2 starts terminating
// its instances: the deadline of the Nodes a warning marks.
const TerminationLead = 30 * time.Minute

// The detail-types of the warning: the guide's page spells it both with and
// without "Reservation" (its English copy without, its other copies with).
// The block's delivery, at its start, asks nothing of the Lambda: no rule
// sends it, and it is not read.
const (
	DetailTypeExpirationWarning      = "Capacity Block Reservation Expiration Warning"
	DetailTypeExpirationWarningShort = "Capacity Block Expiration Warning"
)

var reservationID = regexp.MustCompile(`^cr-[0-9a-f]{8,17}$`)

// Parser reads Capacity Block events.
type Parser struct{}

// Keys implements messages.Parser.
func (Parser) Keys() []messages.Key {
	var keys []messages.Key
	for _, dt := range []string{DetailTypeExpirationWarning, DetailTypeExpirationWarningShort} {
		keys = append(keys, messages.Key{Source: "aws.ec2", DetailType: dt})
	}
	return keys
}

// Parse marks every Node of the block capacity-block-expiration, due when
// EC2 starts terminating them (30 minutes before the end).
func (Parser) Parse(env messages.Envelope) (messages.Message, error) {
	var d Detail
	if err := messages.DecodeDetail(env, &d); err != nil {
		return messages.Message{}, err
	}
	if !reservationID.MatchString(d.CapacityReservationID) {
		return messages.Message{}, messages.Fieldf("detail.capacity-reservation-id",
			"%q is not a capacity reservation id (cr- and 8 or 17 hex digits)", messages.Cut(d.CapacityReservationID))
	}
	end, err := messages.RFC3339("detail.end-date", d.EndDate)
	if err != nil {
		return messages.Message{}, err
	}
	return messages.Message{Kind: v1alpha1.InterruptionKindCapacityBlockExpiration, Deadline: end.Add(-TerminationLead),
		CapacityReservationID: d.CapacityReservationID}, nil
}
