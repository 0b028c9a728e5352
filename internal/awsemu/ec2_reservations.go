package awsemu

import (
	"strconv"
)

type xmlCapacityReservation struct {
	ID                     string   `xml:"capacityReservationId"`
	OwnerID                string   `xml:"ownerId"`
	ARN                    string   `xml:"capacityReservationArn"`
	ZoneID                 string   `xml:"availabilityZoneId"`
	InstanceType           string   `xml:"instanceType"`
	InstancePlatform       string   `xml:"instancePlatform"`
	Zone                   string   `xml:"availabilityZone"`
	Tenancy                string   `xml:"tenancy"`
	TotalInstanceCount     int      `xml:"totalInstanceCount"`
	AvailableInstanceCount int      `xml:"availableInstanceCount"`
	EBSOptimized           bool     `xml:"ebsOptimized"`
	EphemeralStorage       bool     `xml:"ephemeralStorage"`
	State                  string   `xml:"state"`
	StartDate              string   `xml:"startDate"`
	EndDate                string   `xml:"endDate,omitempty"`
	EndDateType            string   `xml:"endDateType"`
	InstanceMatchCriteria  string   `xml:"instanceMatchCriteria"`
	CreateDate             string   `xml:"createDate"`
	ReservationType        string   `xml:"reservationType"`
	Tags                   []xmlTag `xml:"tagSet>item"`
}

type describeCapacityReservationsResponse struct {
	ResponseMeta
	NextToken    string                   `xml:"nextToken,omitempty"`
	Reservations []xmlCapacityReservation `xml:"capacityReservationSet>item"`
}

func (e *Emulator) toXMLReservationLocked(r *CapacityReservation) xmlCapacityReservation {
	x := xmlCapacityReservation{
		ID: r.ID, OwnerID: orDefault(r.OwnerID, e.cfg.AccountID), ARN: "arn:aws:ec2:" + e.cfg.Region + ":" + orDefault(r.OwnerID, e.cfg.AccountID) + ":capacity-reservation/" + r.ID,
		ZoneID: e.zoneID(r.Zone), InstanceType: r.InstanceType, InstancePlatform: r.InstancePlatform, Zone: r.Zone,
		Tenancy: r.Tenancy, TotalInstanceCount: r.TotalInstanceCount, AvailableInstanceCount: e.availableLocked(r),
		EBSOptimized: true, State: e.reservationStateLocked(r), StartDate: isoTime(r.StartDate), EndDateType: r.EndDateType,
		InstanceMatchCriteria: r.InstanceMatchCriteria, CreateDate: isoTime(r.CreateDate), ReservationType: r.ReservationType,
		Tags: tagSet(r.Tags),
	}
	if r.EndDateType == EndLimited {
		x.EndDate = isoTime(r.EndDate)
	}
	return x
}

// describeCapacityReservations lists reservations by id and the documented
// filters (instance-type, owner-id, instance-platform, availability-zone,
// tenancy, state, end-date-type, instance-match-criteria, tag:<key>, tag-key),
// sorted by id and paginated (MaxResults 1 to 1000).
func (e *Emulator) describeCapacityReservations(p params) (any, *APIError) {
	ids := p.strings("CapacityReservationId")
	e.mu.Lock()
	e.advanceLocked()
	var matched []xmlCapacityReservation
	found := 0
	for _, r := range e.sortedReservationsLocked() {
		if len(ids) > 0 && matchValue(ids, r.ID) {
			found++
		}
		x := e.toXMLReservationLocked(r)
		fields := map[string]string{"instance-type": x.InstanceType, "owner-id": x.OwnerID, "instance-platform": x.InstancePlatform,
			"availability-zone": x.Zone, "tenancy": x.Tenancy, "state": x.State, "end-date-type": x.EndDateType,
			"instance-match-criteria": x.InstanceMatchCriteria, "capacity-reservation-id": x.ID}
		if (len(ids) > 0 && !matchValue(ids, r.ID)) || !matchAll(p.filters(), fields, r.Tags) {
			continue
		}
		matched = append(matched, x)
	}
	e.mu.Unlock()
	if len(ids) > found {
		return nil, &APIError{"InvalidCapacityReservationId.NotFound", "The Capacity Reservation ID " + strconv.Quote(ids[0]) + " ... does not exist"}
	}
	from, to, next, err := page(p, len(matched), 1, 1000, 1000)
	if err != nil {
		return nil, err
	}
	return describeCapacityReservationsResponse{ec2Resp("DescribeCapacityReservations"), next, matched[from:to]}, nil
}
