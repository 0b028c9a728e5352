package awsemu

import (
	"sort"
	"strconv"
	"strings"
)

type xmlState struct {
	Code int    `xml:"code"`
	Name string `xml:"name"`
}

type xmlPlacement struct {
	Zone   string `xml:"availabilityZone"`
	ZoneID string `xml:"availabilityZoneId"`
}

type xmlGroup struct {
	ID string `xml:"groupId"`
}

type xmlProfile struct {
	ARN string `xml:"arn"`
}

type xmlMetadataOptions struct {
	State    string `xml:"state"`
	Tokens   string `xml:"httpTokens"`
	HopLimit int32  `xml:"httpPutResponseHopLimit"`
	Endpoint string `xml:"httpEndpoint"`
}

type xmlInstance struct {
	ID           string             `xml:"instanceId"`
	ImageID      string             `xml:"imageId"`
	State        xmlState           `xml:"instanceState"`
	PrivateDNS   string             `xml:"privateDnsName"`
	InstanceType string             `xml:"instanceType"`
	LaunchTime   string             `xml:"launchTime"`
	Placement    xmlPlacement       `xml:"placement"`
	SubnetID     string             `xml:"subnetId"`
	VpcID        string             `xml:"vpcId"`
	PrivateIP    string             `xml:"privateIpAddress"`
	Architecture string             `xml:"architecture"`
	Lifecycle    string             `xml:"instanceLifecycle,omitempty"`
	ClientToken  string             `xml:"clientToken,omitempty"`
	Reservation  string             `xml:"capacityReservationId,omitempty"`
	SpotRequest  string             `xml:"spotInstanceRequestId,omitempty"`
	Groups       []xmlGroup         `xml:"groupSet>item"`
	Profile      *xmlProfile        `xml:"iamInstanceProfile,omitempty"`
	Metadata     xmlMetadataOptions `xml:"metadataOptions"`
	Tags         []xmlTag           `xml:"tagSet>item"`
}

type xmlReservation struct {
	ReservationID string        `xml:"reservationId"`
	OwnerID       string        `xml:"ownerId"`
	Instances     []xmlInstance `xml:"instancesSet>item"`
}

type describeInstancesResponse struct {
	ResponseMeta
	Reservations []xmlReservation `xml:"reservationSet>item"`
	NextToken    string           `xml:"nextToken,omitempty"`
}

func (e *Emulator) toXMLInstance(in Instance) xmlInstance {
	x := xmlInstance{
		ID: in.ID, ImageID: in.ImageID, State: xmlState{stateCodes[in.State], in.State},
		PrivateDNS: "ip-" + in.PrivateIP + ".ec2.internal", InstanceType: in.InstanceType,
		LaunchTime: isoTime(in.LaunchTime), Placement: xmlPlacement{in.Zone, e.zoneID(in.Zone)},
		SubnetID: in.SubnetID, VpcID: in.VpcID, PrivateIP: in.PrivateIP, Architecture: e.archOf(in.InstanceType),
		ClientToken: in.ClientToken, Metadata: xmlMetadataOptions{"applied", in.HTTPTokens, in.HopLimit, "enabled"},
		Tags: tagSet(in.Tags), Reservation: in.ReservationID, SpotRequest: in.SpotRequestID,
	}
	if in.CapacityType != CapacityOnDemand {
		x.Lifecycle = in.CapacityType // spot or capacity-block
	}
	for _, g := range in.SecurityGroups {
		x.Groups = append(x.Groups, xmlGroup{g})
	}
	if in.ProfileARN != "" {
		x.Profile = &xmlProfile{in.ProfileARN}
	}
	return x
}

func (e *Emulator) archOf(instanceType string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.types[instanceType].ec2Arch()
}

func (e *Emulator) describeInstances(p params) (any, *APIError) {
	ids := p.strings("InstanceId")
	fs := p.filters()
	matched := e.describable(ids, func(in *Instance) bool {
		return matchLazy(fs, func() map[string]string { return instanceFields(*in) }, in.Tags)
	})
	if len(ids) > 0 && len(matched) < len(ids) {
		return nil, &APIError{"InvalidInstanceID.NotFound", "The instance IDs " + strconv.Quote(ids[0]) + " ... do not exist"}
	}
	if len(ids) > 0 && p.str("MaxResults") != "" {
		return nil, &APIError{"InvalidParameterCombination", "The parameter instancesSet cannot be used with the parameter maxResults"}
	}
	from, to, next, err := page(p, len(matched), 5, 1000, 1000)
	if err != nil {
		return nil, err
	}
	out := describeInstancesResponse{ResponseMeta: ec2Resp("DescribeInstances"), NextToken: next}
	for _, in := range matched[from:to] {
		out.Reservations = append(out.Reservations, xmlReservation{"r-" + in.ID[2:], e.cfg.AccountID, []xmlInstance{e.toXMLInstance(in)}})
	}
	return out, nil
}

// describable returns copies of the visible instances ids name (every one
// when none) that match, in launch order. A single id is looked up rather
// than searched for: a controller's Get of one instance must not scan a fleet
// of thousands. Only matches are copied: a search by tag (a launch's check
// for its claim's instance) must not copy the whole fleet.
func (e *Emulator) describable(ids []string, match func(*Instance) bool) []Instance {
	if len(ids) != 1 || strings.ContainsAny(ids[0], "*?") {
		return e.instancesWhere(func(in *Instance) bool {
			return (len(ids) == 0 || matchValue(ids, in.ID)) && e.visibleLocked(in) && match(in)
		})
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advanceLocked()
	if in, ok := e.instances[ids[0]]; ok && e.visibleLocked(in) && match(in) {
		return []Instance{in.clone()}
	}
	return nil
}

func instanceFields(in Instance) map[string]string {
	lifecycle := ""
	if in.CapacityType != CapacityOnDemand {
		lifecycle = in.CapacityType
	}
	return map[string]string{
		"instance-id": in.ID, "instance-state-name": in.State, "instance-type": in.InstanceType,
		"availability-zone": in.Zone, "subnet-id": in.SubnetID, "image-id": in.ImageID,
		"client-token": in.ClientToken, "instance-lifecycle": lifecycle, "vpc-id": in.VpcID,
		"capacity-reservation-id": in.ReservationID,
	}
}

type xmlStateChange struct {
	ID       string   `xml:"instanceId"`
	Current  xmlState `xml:"currentState"`
	Previous xmlState `xml:"previousState"`
}

type terminateResponse struct {
	ResponseMeta
	Changes []xmlStateChange `xml:"instancesSet>item"`
}

func (e *Emulator) terminateInstances(p params) (any, *APIError) {
	ids := p.strings("InstanceId")
	if len(ids) == 0 {
		return nil, &APIError{"MissingParameter", "The request must contain the parameter InstanceId"}
	}
	changes, err := e.terminateVisible(ids)
	if err != nil {
		return nil, &APIError{"InvalidInstanceID.NotFound", err.Error()}
	}
	out := terminateResponse{ResponseMeta: ec2Resp("TerminateInstances")}
	for _, c := range changes {
		out.Changes = append(out.Changes, xmlStateChange{c.ID, xmlState{stateCodes[c.Current], c.Current}, xmlState{stateCodes[c.Previous], c.Previous}})
	}
	return out, nil
}

type createTagsResponse struct {
	ResponseMeta
	Return bool `xml:"return"`
}

func (e *Emulator) createTags(p params) (any, *APIError) {
	ids, tags := p.strings("ResourceId"), p.tags("Tag")
	e.mu.Lock()
	defer e.mu.Unlock()
	sort.Strings(ids)
	for _, id := range ids {
		if in, ok := e.instances[id]; ok {
			for k, v := range tags {
				in.Tags[k] = v
			}
			continue
		}
		return nil, &APIError{"InvalidID", "The ID '" + id + "' is not valid"}
	}
	return createTagsResponse{ec2Resp("CreateTags"), true}, nil
}
