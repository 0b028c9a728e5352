package awsemu

import (
	"sort"
)

type xmlLaunchTemplate struct {
	ID             string   `xml:"launchTemplateId"`
	Name           string   `xml:"launchTemplateName"`
	CreateTime     string   `xml:"createTime"`
	CreatedBy      string   `xml:"createdBy"`
	DefaultVersion int64    `xml:"defaultVersionNumber"`
	LatestVersion  int64    `xml:"latestVersionNumber"`
	Tags           []xmlTag `xml:"tagSet>item"`
}

type launchTemplateResponse struct {
	ResponseMeta
	LaunchTemplate xmlLaunchTemplate `xml:"launchTemplate"`
}

type describeLTsResponse struct {
	ResponseMeta
	LaunchTemplates []xmlLaunchTemplate `xml:"launchTemplates>item"`
	NextToken       string              `xml:"nextToken,omitempty"`
}

func (e *Emulator) toXMLLT(lt *LaunchTemplate) xmlLaunchTemplate {
	return xmlLaunchTemplate{lt.ID, lt.Name, isoTime(lt.CreateTime), "arn:aws:iam::" + e.cfg.AccountID + ":role/stowage", 1, 1, tagSet(lt.Tags)}
}

func (e *Emulator) createLaunchTemplate(p params) (any, *APIError) {
	name := p.str("LaunchTemplateName")
	if name == "" {
		return nil, &APIError{"MissingParameter", "The request must contain the parameter LaunchTemplateName"}
	}
	lt := parseLaunchTemplateData(p, "LaunchTemplateData")
	lt.Name = name
	for _, m := range p.members("TagSpecification") {
		if p.str(m+".ResourceType") == "launch-template" {
			lt.Tags = p.tags(m + ".Tag")
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, existing := range e.lts {
		if existing.Name == name {
			return nil, &APIError{"InvalidLaunchTemplateName.AlreadyExistsException", "Launch template name already in use."}
		}
	}
	lt.ID = "lt-" + e.newID("x")[2:]
	lt.CreateTime = e.clk.Now()
	if lt.ProfileName != "" {
		lt.ProfileARN = "arn:aws:iam::" + e.cfg.AccountID + ":instance-profile/" + lt.ProfileName
	}
	e.lts[lt.ID] = lt
	return launchTemplateResponse{ec2Resp("CreateLaunchTemplate"), e.toXMLLT(lt)}, nil
}

func parseLaunchTemplateData(p params, d string) *LaunchTemplate {
	lt := &LaunchTemplate{
		ImageID: p.str(d + ".ImageId"), InstanceType: p.str(d + ".InstanceType"),
		SecurityGroups: p.strings(d + ".SecurityGroupId"), ProfileName: p.str(d + ".IamInstanceProfile.Name"),
		ProfileARN: p.str(d + ".IamInstanceProfile.Arn"), UserData: p.str(d + ".UserData"),
		HTTPTokens:   p.str(d + ".MetadataOptions.HttpTokens"),
		HopLimit:     int32(p.integer(d+".MetadataOptions.HttpPutResponseHopLimit", 0)), //nolint:gosec // small numbers
		InstanceTags: map[string]string{}, TagSpecs: map[string]map[string]string{},
		KeyName: p.str(d + ".KeyName"), PlacementGroup: p.str(d + ".Placement.GroupName"),
	}
	if lt.HTTPTokens == "" {
		lt.HTTPTokens = "optional"
	}
	lt.HTTPProtocolIPv6 = orDefault(p.str(d+".MetadataOptions.HttpProtocolIpv6"), "disabled")
	for _, m := range p.members(d + ".NetworkInterface") {
		ni := NetworkInterface{DeviceIndex: p.integer(m+".DeviceIndex", 0), Groups: p.strings(m + ".SecurityGroupId")}
		if v := p.str(m + ".AssociatePublicIpAddress"); v != "" {
			public := v == "true"
			ni.AssociatePublicIP = &public
		}
		lt.NetworkInterfaces = append(lt.NetworkInterfaces, ni)
	}
	crs := d + ".CapacityReservationSpecification"
	lt.ReservationPreference = orDefault(p.str(crs+".CapacityReservationPreference"), MatchOpen)
	lt.ReservationTarget = p.str(crs + ".CapacityReservationTarget.CapacityReservationId")
	lt.MarketType = p.str(d + ".InstanceMarketOptions.MarketType")
	for _, m := range p.members(d + ".TagSpecification") {
		lt.TagSpecs[p.str(m+".ResourceType")] = p.tags(m + ".Tag")
	}
	if tags, ok := lt.TagSpecs["instance"]; ok {
		lt.InstanceTags = tags
	}
	for _, m := range p.members(d + ".BlockDeviceMapping") {
		lt.BlockDevices = append(lt.BlockDevices, BlockDevice{
			DeviceName: p.str(m + ".DeviceName"), VolumeSize: int32(p.integer(m+".Ebs.VolumeSize", 0)), //nolint:gosec // small
			VolumeType: p.str(m + ".Ebs.VolumeType"), Encrypted: p.boolean(m + ".Ebs.Encrypted"), SnapshotID: p.str(m + ".Ebs.SnapshotId"),
		})
	}
	return lt
}

func (e *Emulator) describeLaunchTemplates(p params) (any, *APIError) {
	ids, names := p.strings("LaunchTemplateId"), p.strings("LaunchTemplateName")
	e.mu.Lock()
	var matched []xmlLaunchTemplate
	for _, lt := range e.lts {
		fields := map[string]string{"launch-template-name": lt.Name, "launch-template-id": lt.ID}
		if (len(ids) > 0 && !matchValue(ids, lt.ID)) || (len(names) > 0 && !matchValue(names, lt.Name)) ||
			!matchAll(p.filters(), fields, lt.Tags) {
			continue
		}
		matched = append(matched, e.toXMLLT(lt))
	}
	e.mu.Unlock()
	if len(names) > len(matched) || len(ids) > len(matched) {
		code := "InvalidLaunchTemplateName.NotFoundException"
		if len(ids) > 0 {
			code = "InvalidLaunchTemplateId.NotFound"
		}
		return nil, &APIError{code, "At least one of the launch templates specified in the request does not exist."}
	}
	sort.Slice(matched, func(i, j int) bool { return matched[i].Name < matched[j].Name })
	from, to, next, err := page(p, len(matched), 1, 200, 200)
	if err != nil {
		return nil, err
	}
	return describeLTsResponse{ec2Resp("DescribeLaunchTemplates"), matched[from:to], next}, nil
}

func (e *Emulator) deleteLaunchTemplate(p params) (any, *APIError) {
	id, name := p.str("LaunchTemplateId"), p.str("LaunchTemplateName")
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, lt := range e.lts {
		if (id != "" && lt.ID == id) || (id == "" && name != "" && lt.Name == name) {
			delete(e.lts, lt.ID)
			return launchTemplateResponse{ec2Resp("DeleteLaunchTemplate"), e.toXMLLT(lt)}, nil
		}
	}
	if id != "" {
		return nil, &APIError{"InvalidLaunchTemplateId.NotFound", "The specified launch template, with template ID " + id + ", does not exist."}
	}
	return nil, &APIError{"InvalidLaunchTemplateName.NotFoundException", "The specified launch template, with template name " + name + ", does not exist."}
}
