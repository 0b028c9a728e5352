package awsemu

import (
	"encoding/xml"
	"net/http"
	"sort"
	"time"
)

const ec2Namespace = "http://ec2.amazonaws.com/doc/2016-11-15/"

// ec2Handler answers one EC2 action with a response body or an API error.
type ec2Handler func(e *Emulator, p params) (any, *APIError)

var ec2Handlers = map[string]ec2Handler{
	"DescribeInstanceTypes":         (*Emulator).describeInstanceTypes,
	"DescribeInstanceTypeOfferings": (*Emulator).describeInstanceTypeOfferings,
	"DescribeSpotPriceHistory":      (*Emulator).describeSpotPriceHistory,
	"DescribeAvailabilityZones":     (*Emulator).describeAvailabilityZones,
	"DescribeSubnets":               (*Emulator).describeSubnets,
	"DescribeSecurityGroups":        (*Emulator).describeSecurityGroups,
	"DescribeImages":                (*Emulator).describeImages,
	"CreateLaunchTemplate":          (*Emulator).createLaunchTemplate,
	"DescribeLaunchTemplates":       (*Emulator).describeLaunchTemplates,
	"DeleteLaunchTemplate":          (*Emulator).deleteLaunchTemplate,
	"CreateFleet":                   (*Emulator).createFleetHTTP,
	"DescribeInstances":             (*Emulator).describeInstances,
	"TerminateInstances":            (*Emulator).terminateInstances,
	"CreateTags":                    (*Emulator).createTags,
	"DescribeCapacityReservations":  (*Emulator).describeCapacityReservations,
}

func (e *Emulator) serveEC2(w http.ResponseWriter, req request) {
	h, ok := ec2Handlers[req.action]
	if !ok {
		writeEC2Error(w, http.StatusBadRequest, "InvalidAction", "The action "+req.action+" is not valid for this web service.")
		return
	}
	if req.form.boolean("DryRun") {
		writeEC2Error(w, http.StatusPreconditionFailed, "DryRunOperation", "Request would have succeeded, but DryRun flag is set.")
		return
	}
	out, apiErr := h(e, req.form)
	if apiErr != nil {
		writeEC2Error(w, http.StatusBadRequest, apiErr.Code, apiErr.Message)
		return
	}
	writeXML(w, http.StatusOK, out)
}

// ResponseMeta is the root element and request id every EC2 response body
// embeds; it is exported because encoding/xml cannot read an unexported
// embedded struct.
type ResponseMeta struct {
	XMLName   xml.Name
	Xmlns     string `xml:"xmlns,attr"`
	RequestID string `xml:"requestId"`
}

func ec2Resp(action string) ResponseMeta {
	return ResponseMeta{XMLName: xml.Name{Local: action + "Response"}, Xmlns: ec2Namespace, RequestID: "req-emulated"}
}

type xmlTag struct {
	Key   string `xml:"key"`
	Value string `xml:"value"`
}

func tagSet(tags map[string]string) []xmlTag {
	out := make([]xmlTag, 0, len(tags))
	for k, v := range tags {
		out = append(out, xmlTag{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func isoTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

type xmlZone struct {
	ZoneName   string `xml:"zoneName"`
	ZoneID     string `xml:"zoneId"`
	ZoneState  string `xml:"zoneState"`
	RegionName string `xml:"regionName"`
	ZoneType   string `xml:"zoneType"`
}

type describeZonesResponse struct {
	ResponseMeta
	Zones []xmlZone `xml:"availabilityZoneInfo>item"`
}

func (e *Emulator) describeAvailabilityZones(p params) (any, *APIError) {
	names, ids := p.strings("ZoneName"), p.strings("ZoneId")
	out := describeZonesResponse{ResponseMeta: ec2Resp("DescribeAvailabilityZones")}
	for _, z := range e.cfg.Zones {
		if (len(names) > 0 && !matchValue(names, z.Name)) || (len(ids) > 0 && !matchValue(ids, z.ID)) {
			continue
		}
		out.Zones = append(out.Zones, xmlZone{z.Name, z.ID, "available", e.cfg.Region, "availability-zone"})
	}
	return out, nil
}
