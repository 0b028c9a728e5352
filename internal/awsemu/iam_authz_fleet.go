package awsemu

import (
	"strconv"
	"strings"
)

// An instant fleet is authorized as ec2:CreateFleet and, for each launch it
// may make, as ec2:RunInstances, which it performs with the caller's
// permissions. Each launch touches the resources below; AWS's Service
// Authorization Reference (iamReference) says which of them each action is
// authorized on, and which of each resource's condition keys it carries.

// launchResource is one resource a launch touches, with every condition key
// AWS may give it; forAction keeps those the reference lists.
type launchResource struct {
	typ, arn string
	ctx      map[string][]string
}

// launchSpec is one override of a fleet, as it would launch.
type launchSpec struct {
	lt                   *LaunchTemplate
	instanceType, subnet string
	image                string
	imageFromTemplate    bool
	market               string // spot or on-demand
	tags                 map[string]map[string]string
}

// authzCreateFleet authorizes an instant fleet: ec2:CreateFleet and
// ec2:RunInstances on what each override would launch (a RunInstances
// denied fails the launches that need it, as errors of the fleet, and not
// the call, as EC2 answers an instant fleet); ec2:CreateTags for
// what it tags (ec2:CreateAction CreateFleet); and iam:PassRole for the role
// of each template's instance profile, passed to ec2.amazonaws.com.
func (e *Emulator) authzCreateFleet(req request, _ string) ([]authRequest, *policy) {
	p := req.form
	tags := map[string]map[string]string{}
	for _, m := range p.members("TagSpecification") {
		tags[p.str(m+".ResourceType")] = p.tags(m + ".Tag")
	}
	market := orDefault(p.str("TargetCapacitySpecification.DefaultTargetCapacityType"), CapacityOnDemand)
	e.mu.Lock()
	defer e.mu.Unlock()
	var s authSet
	s.add("ec2:CreateFleet", e.ec2ARN("fleet", "*"), e.forAction("ec2:CreateFleet", "fleet", requestTags(tags["fleet"], nil)))
	var roles []string
	launch := 0 // the override's index, in parseFleet's order
	for _, c := range p.members("LaunchTemplateConfigs") {
		lt := e.ltBySpecLocked(p, c+".LaunchTemplateSpecification")
		if lt == nil { // the call fails, naming the template, once authorized for what it names
			for _, o := range p.members(c + ".Overrides") {
				s.add("ec2:CreateFleet", e.ec2ARN("instance", "*"), e.forAction("ec2:CreateFleet", "instance",
					requestTags(tags["instance"], map[string][]string{"ec2:instancetype": {p.str(o + ".InstanceType")}})))
			}
			continue
		}
		roles = append(roles, e.profileRolesLocked(lt.ProfileName)...)
		overrides := p.members(c + ".Overrides")
		if len(overrides) == 0 {
			overrides = []string{c + ".Overrides.none"}
		}
		for _, o := range overrides {
			spec := launchSpec{lt: lt, instanceType: orDefault(p.str(o+".InstanceType"), lt.InstanceType), subnet: p.str(o + ".SubnetId"),
				image: orDefault(p.str(o+".ImageId"), lt.ImageID), imageFromTemplate: p.str(o+".ImageId") == "", market: market, tags: tags}
			if spec.subnet == "" {
				spec.subnet = e.zoneSubnetLocked(p.str(o + ".AvailabilityZone"))
			}
			for _, r := range e.launchResourcesLocked(spec) {
				if ctx, ok := e.forActionOK("ec2:CreateFleet", r.typ, r.ctx); ok {
					s.add("ec2:CreateFleet", r.arn, ctx)
				}
				if ctx, ok := e.forActionOK("ec2:RunInstances", r.typ, r.ctx); ok {
					s.addFor("ec2:RunInstances", r.arn, ctx, launch)
				}
			}
			e.spotRoleLaunchesLocked(&s, market, launch)
			launch++
		}
	}
	for _, typ := range []string{"fleet", "instance", "volume", "network-interface", "spot-instances-request"} {
		if len(tags[typ]) > 0 && (typ != "spot-instances-request" || market == CapacitySpot) {
			s.add("ec2:CreateTags", e.ec2ARN(typ, "*"), requestTags(tags[typ], map[string][]string{"ec2:createaction": {"CreateFleet"}}))
		}
	}
	for _, r := range roles {
		s.add("iam:PassRole", r, map[string][]string{"iam:passedtoservice": {"ec2.amazonaws.com"}})
	}
	return s.out, nil
}

// forAction keeps the condition keys the reference lists for the action on
// the resource type, and the global keys other than the tag keys.
func (e *Emulator) forAction(action, typ string, ctx map[string][]string) map[string][]string {
	out, _ := e.forActionOK(action, typ, ctx)
	return out
}

// forActionOK is forAction, and whether the action is authorized on the
// resource type at all.
func (e *Emulator) forActionOK(action, typ string, ctx map[string][]string) (map[string][]string, bool) {
	ref := iamReference[action]
	listed := map[string]bool{}
	for _, k := range ref.keys {
		listed[keyName(k)] = true
	}
	found := false
	for _, rt := range ref.resources {
		if rt.typ == typ {
			found = true
			for _, k := range rt.keys {
				listed[keyName(k)] = true
			}
		}
	}
	out := map[string][]string{}
	for k, v := range ctx {
		name := k
		if i := strings.Index(k, "/"); i >= 0 {
			name = k[:i+1]
		}
		if listed[name] || (strings.HasPrefix(name, "aws:") && !tagKeys[name]) {
			out[k] = v
		}
	}
	return out, found
}

// launchResourcesLocked lists what one launch touches: the instance, its
// image and the image's snapshot, its volumes and their snapshots, its
// network interface, subnet and security groups, the launch template, and
// the spot request, capacity reservation, key pair and placement group when
// the launch has one; each with the condition keys EC2 gives it.
func (e *Emulator) launchResourcesLocked(l launchSpec) []launchResource {
	lt := l.lt
	ltARN := e.ec2ARN("launch-template", lt.ID)
	fromLT := func(ctx map[string][]string, fromTemplate bool) map[string][]string {
		ctx["ec2:launchtemplate"] = []string{ltARN}
		ctx["ec2:islaunchtemplateresource"] = []string{strconv.FormatBool(fromTemplate)}
		return ctx
	}
	created := func(typ string) map[string]string { // what a created resource is tagged with
		out := cloneTags(lt.TagSpecs[typ])
		for k, v := range l.tags[typ] {
			out[k] = v
		}
		return out
	}
	subnet := e.network.subnets[l.subnet]
	zone, vpcARN := "", ""
	if subnet != nil {
		zone, vpcARN = subnet.Zone, e.ec2ARN("vpc", subnet.VpcID)
	}
	inZone := func(ctx map[string][]string) map[string][]string {
		if zone != "" {
			ctx["ec2:availabilityzone"] = []string{zone}
			ctx["ec2:availabilityzoneid"] = []string{e.zoneID(zone)}
		}
		return ctx
	}
	instance := requestTags(created("instance"), map[string][]string{"ec2:instancetype": {l.instanceType},
		"ec2:instancemarkettype": {l.market}, "ec2:tenancy": {"default"}, "ec2:rootdevicetype": {"ebs"},
		"ec2:metadatahttptokens": {orDefault(lt.HTTPTokens, "optional")}})
	if lt.HopLimit > 0 {
		instance["ec2:metadatahttpputresponsehoplimit"] = []string{strconv.Itoa(int(lt.HopLimit))}
	}
	if lt.ProfileName != "" {
		instance["ec2:instanceprofile"] = []string{e.profileARNLocked(lt.ProfileName, "")}
	}
	out := []launchResource{
		{"instance", e.ec2ARN("instance", "*"), fromLT(inZone(instance), false)},
		{"launch-template", ltARN, fromLT(resourceTags(lt.Tags, true), true)},
		{"network-interface", e.ec2ARN("network-interface", "*"), fromLT(inZone(requestTags(created("network-interface"),
			map[string][]string{"ec2:subnet": {e.ec2ARN("subnet", l.subnet)}, "ec2:vpc": {vpcARN}})), true)},
	}
	out = append(out, e.imageResourcesLocked(l, fromLT, created("volume"), inZone)...)
	if subnet != nil {
		out = append(out, launchResource{"subnet", e.ec2ARN("subnet", subnet.ID), fromLT(inZone(withResourceTags(
			map[string][]string{"ec2:subnetid": {subnet.ID}, "ec2:vpc": {vpcARN}}, subnet.Tags)), false)})
	}
	for _, sg := range e.launchGroupsLocked(lt, subnet) {
		out = append(out, launchResource{"security-group", e.ec2ARN("security-group", sg), fromLT(withResourceTags(
			map[string][]string{"ec2:securitygroupid": {sg}, "ec2:vpc": {e.ec2ARN("vpc", e.sgVPCLocked(sg))}}, e.sgTagsLocked(sg)), true)})
	}
	return append(out, e.optionalLaunchResourcesLocked(l, fromLT, created("spot-instances-request"))...)
}

// imageResourcesLocked lists the image, its root snapshot and volume, and
// the template's other volumes with the snapshots they come from.
func (e *Emulator) imageResourcesLocked(l launchSpec, fromLT func(map[string][]string, bool) map[string][]string,
	volumeTags map[string]string, inZone func(map[string][]string) map[string][]string) []launchResource {
	var out []launchResource
	root := BlockDevice{VolumeSize: 20, VolumeType: "gp3"}
	owner := "amazon"
	if img := e.network.images[l.image]; img != nil {
		out = append(out, launchResource{"image", e.ec2ARN("image", img.ID), fromLT(withResourceTags(map[string][]string{
			"ec2:imageid": {img.ID}, "ec2:owner": {img.OwnerID}, "ec2:public": {"true"}, "ec2:imagetype": {"machine"},
			"ec2:rootdevicetype": {"ebs"}}, img.Tags), l.imageFromTemplate)})
		root.SnapshotID, root.VolumeSize, owner = img.RootSnapshot, img.RootVolumeSize, img.OwnerID
	}
	devices := l.lt.BlockDevices
	if len(devices) == 0 {
		devices = []BlockDevice{root}
	}
	for _, d := range devices {
		snap := orDefault(d.SnapshotID, root.SnapshotID)
		if d.SnapshotID != "" && d.SnapshotID != root.SnapshotID {
			owner = e.cfg.AccountID // a NodeClass's own snapshot is the account's
		}
		vol := requestTags(volumeTags, map[string][]string{"ec2:volumetype": {orDefault(d.VolumeType, "gp3")},
			"ec2:encrypted": {strconv.FormatBool(d.Encrypted)}})
		if d.VolumeSize > 0 {
			vol["ec2:volumesize"] = []string{strconv.Itoa(int(d.VolumeSize))}
		}
		if snap != "" {
			vol["ec2:parentsnapshot"] = []string{e.ec2ARN("snapshot", snap)}
			out = append(out, launchResource{"snapshot", e.ec2ARN("snapshot", snap), fromLT(map[string][]string{
				"ec2:snapshotid": {snap}, "ec2:owner": {owner}}, true)})
		}
		out = append(out, launchResource{"volume", e.ec2ARN("volume", "*"), fromLT(inZone(vol), true)})
	}
	return out
}

// optionalLaunchResourcesLocked lists the spot request of a spot launch and
// the template's capacity reservation, key pair and placement group.
func (e *Emulator) optionalLaunchResourcesLocked(l launchSpec, fromLT func(map[string][]string, bool) map[string][]string,
	spotTags map[string]string) []launchResource {
	lt := l.lt
	var out []launchResource
	if l.market == CapacitySpot {
		out = append(out, launchResource{"spot-instances-request", e.ec2ARN("spot-instances-request", "*"), requestTags(spotTags, nil)})
	}
	if cr := e.reservations[lt.ReservationTarget]; cr != nil {
		out = append(out, launchResource{"capacity-reservation", e.ec2ARN("capacity-reservation", cr.ID),
			fromLT(resourceTags(cr.Tags, true), true)})
	}
	if lt.KeyName != "" {
		out = append(out, launchResource{"key-pair", e.ec2ARN("key-pair", lt.KeyName),
			fromLT(map[string][]string{"ec2:keypairname": {lt.KeyName}}, true)})
	}
	if lt.PlacementGroup != "" {
		out = append(out, launchResource{"placement-group", e.ec2ARN("placement-group", lt.PlacementGroup),
			fromLT(map[string][]string{"ec2:placementgroupname": {lt.PlacementGroup}}, true)})
	}
	return out
}

// withResourceTags adds a resource's tags to ctx as aws: and ec2:ResourceTag keys.
func withResourceTags(ctx map[string][]string, tags map[string]string) map[string][]string {
	for k, v := range resourceTags(tags, true) {
		ctx[k] = v
	}
	return ctx
}

// zoneSubnetLocked is the subnet a launch into a zone takes, as the fleet's
// launch does (launch.go overrideSubnetLocked).
func (e *Emulator) zoneSubnetLocked(zone string) string {
	found := ""
	for id, s := range e.network.subnets {
		if s.Zone == zone && (found == "" || id < found) {
			found = id
		}
	}
	return found
}

// launchGroupsLocked are the security groups a launch gets: its template's,
// else its VPC's default group, as EC2 gives.
func (e *Emulator) launchGroupsLocked(lt *LaunchTemplate, s *Subnet) []string {
	if groups := lt.instanceGroups(); len(groups) > 0 || s == nil {
		return groups
	}
	id := "sg-" + strings.TrimPrefix(s.VpcID, "vpc-") // from the VPC's id: the seeded ids stay as they were
	if e.network.sgs[id] == nil {
		e.network.sgs[id] = &SecurityGroup{ID: id, Name: "default", VpcID: s.VpcID, Tags: map[string]string{}}
	}
	return []string{id}
}

func (e *Emulator) sgVPCLocked(id string) string {
	if g := e.network.sgs[id]; g != nil {
		return g.VpcID
	}
	return ""
}
