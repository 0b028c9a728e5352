package awsemu

import (
	"errors"
	"strconv"
)

type xmlLTSpec struct {
	ID      string `xml:"launchTemplateId,omitempty"`
	Name    string `xml:"launchTemplateName,omitempty"`
	Version string `xml:"version,omitempty"`
}

type xmlOverrides struct {
	InstanceType string `xml:"instanceType,omitempty"`
	SubnetID     string `xml:"subnetId,omitempty"`
	Zone         string `xml:"availabilityZone,omitempty"`
	ImageID      string `xml:"imageId,omitempty"`
	Priority     string `xml:"priority,omitempty"`
}

type xmlLTAndOverrides struct {
	Spec      xmlLTSpec    `xml:"launchTemplateSpecification"`
	Overrides xmlOverrides `xml:"overrides"`
}

type xmlFleetError struct {
	LTO       xmlLTAndOverrides `xml:"launchTemplateAndOverrides"`
	Lifecycle string            `xml:"lifecycle"`
	Code      string            `xml:"errorCode"`
	Message   string            `xml:"errorMessage"`
}

type xmlFleetInstance struct {
	LTO          xmlLTAndOverrides `xml:"launchTemplateAndOverrides"`
	Lifecycle    string            `xml:"lifecycle"`
	InstanceIDs  []string          `xml:"instanceIds>item"`
	InstanceType string            `xml:"instanceType"`
	Platform     string            `xml:"platform,omitempty"`
}

type createFleetResponse struct {
	ResponseMeta
	FleetID   string             `xml:"fleetId"`
	Errors    []xmlFleetError    `xml:"errorSet>item"`
	Instances []xmlFleetInstance `xml:"fleetInstanceSet>item"`
}

func (e *Emulator) createFleetHTTP(p params) (any, *APIError) {
	if t := p.str("Type"); t != "instant" {
		return nil, &APIError{"InvalidParameterValue", "the emulator supports only fleets of type instant, not " + strconv.Quote(t)}
	}
	req, apiErr := e.parseFleet(p)
	if apiErr != nil {
		return nil, apiErr
	}
	res, err := e.CreateFleet(req)
	var ae *APIError
	if errors.As(err, &ae) {
		return nil, ae
	}
	out := createFleetResponse{ResponseMeta: ec2Resp("CreateFleet"), FleetID: res.FleetID}
	for _, fe := range res.Errors {
		out.Errors = append(out.Errors, xmlFleetError{toXMLLTO(fe.Override), fe.Lifecycle, fe.Code, fe.Message})
	}
	for _, fi := range res.Instances {
		out.Instances = append(out.Instances, xmlFleetInstance{toXMLLTO(fi.Override), fi.Lifecycle, fi.InstanceIDs, fi.Override.InstanceType, ""})
	}
	return out, nil
}

func toXMLLTO(o FleetOverride) xmlLTAndOverrides {
	x := xmlLTAndOverrides{Spec: xmlLTSpec{ID: o.LaunchTemplateID, Version: o.Version},
		Overrides: xmlOverrides{InstanceType: o.InstanceType, SubnetID: o.SubnetID, Zone: o.Zone, ImageID: o.ImageID}}
	if o.HasPriority {
		x.Overrides.Priority = strconv.FormatFloat(o.Priority, 'f', -1, 64)
	}
	return x
}

func (e *Emulator) parseFleet(p params) (FleetRequest, *APIError) {
	req := FleetRequest{
		ClientToken:          p.str("ClientToken"),
		CapacityType:         p.str("TargetCapacitySpecification.DefaultTargetCapacityType"),
		TotalTargetCapacity:  p.integer("TargetCapacitySpecification.TotalTargetCapacity", 0),
		SpotStrategy:         p.str("SpotOptions.AllocationStrategy"),
		OnDemandStrategy:     p.str("OnDemandOptions.AllocationStrategy"),
		InstanceTags:         map[string]string{},
		CapacityReservations: p.str("OnDemandOptions.CapacityReservationOptions.UsageStrategy") == "use-capacity-reservations-first",
		Denied:               p.launchDenials,
	}
	for _, m := range p.members("TagSpecification") {
		switch p.str(m + ".ResourceType") {
		case "instance":
			req.InstanceTags = p.tags(m + ".Tag")
		case "fleet":
			req.FleetTags = p.tags(m + ".Tag")
		}
	}
	for _, c := range p.members("LaunchTemplateConfigs") {
		ltID, apiErr := e.resolveLTSpec(p, c+".LaunchTemplateSpecification")
		if apiErr != nil {
			return req, apiErr
		}
		for _, o := range p.members(c + ".Overrides") {
			req.Overrides = append(req.Overrides, parseOverride(p, o, ltID, p.str(c+".LaunchTemplateSpecification.Version")))
		}
		if len(p.members(c+".Overrides")) == 0 {
			req.Overrides = append(req.Overrides, FleetOverride{LaunchTemplateID: ltID})
		}
	}
	return req, nil
}

func parseOverride(p params, o, ltID, version string) FleetOverride {
	fo := FleetOverride{LaunchTemplateID: ltID, Version: version, InstanceType: p.str(o + ".InstanceType"),
		SubnetID: p.str(o + ".SubnetId"), Zone: p.str(o + ".AvailabilityZone"), ImageID: p.str(o + ".ImageId")}
	if pr := p.str(o + ".Priority"); pr != "" {
		fo.Priority, _ = strconv.ParseFloat(pr, 64)
		fo.HasPriority = true
	}
	return fo
}

func (e *Emulator) resolveLTSpec(p params, s string) (string, *APIError) {
	id, name := p.str(s+".LaunchTemplateId"), p.str(s+".LaunchTemplateName")
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, lt := range e.lts {
		if (id != "" && lt.ID == id) || (id == "" && lt.Name == name) {
			return lt.ID, nil
		}
	}
	if id != "" {
		return "", &APIError{"InvalidLaunchTemplateId.NotFound", "The specified launch template, with template ID " + id + ", does not exist."}
	}
	return "", &APIError{"InvalidLaunchTemplateName.NotFoundException", "The specified launch template, with template name " + name + ", does not exist."}
}
