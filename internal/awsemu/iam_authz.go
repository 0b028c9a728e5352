package awsemu

import (
	"encoding/json"
	"sort"
	"strings"
)

// An authorizer lists the authorizations a call needs, with the resource's
// own policy when it has one (an SQS queue's). It locks the emulator itself.
type authorizer func(e *Emulator, req request, action string) ([]authRequest, *policy)

// authorizers are the calls whose authorizations go beyond their own action
// on "*" (an action without resource-level permissions), one line each.
var authorizers = map[string]authorizer{
	"ec2:CreateFleet":              (*Emulator).authzCreateFleet,
	"ec2:CreateLaunchTemplate":     (*Emulator).authzCreateLaunchTemplate,
	"ec2:DeleteLaunchTemplate":     (*Emulator).authzDeleteLaunchTemplate,
	"ec2:TerminateInstances":       (*Emulator).authzTerminateInstances,
	"ec2:CreateTags":               (*Emulator).authzCreateTags,
	"iam:CreateInstanceProfile":    (*Emulator).authzCreateInstanceProfile,
	"iam:AddRoleToInstanceProfile": (*Emulator).authzAddRoleToInstanceProfile,
	"ssm:GetParameter":             (*Emulator).authzGetParameter,
}

// serviceAuthorizers cover every other call of a service.
var serviceAuthorizers = map[string]authorizer{
	"iam": (*Emulator).authzIAM,
	"sqs": (*Emulator).authzSQS,
	"eks": (*Emulator).authzEKS,
}

func (e *Emulator) authRequests(req request, action string) ([]authRequest, *policy) {
	if a, ok := authorizers[action]; ok {
		return a(e, req, action)
	}
	if a, ok := serviceAuthorizers[req.service]; ok {
		return a(e, req, action)
	}
	return []authRequest{{action: action, resource: "*", context: map[string][]string{}}}, nil
}

// authSet collects a call's authorizations once each, in order.
type authSet struct {
	out  []authRequest
	seen map[string]bool
}

func (s *authSet) add(action, resource string, ctx map[string][]string) {
	key := action + " " + resource
	if t := ctx["ec2:instancetype"]; len(t) > 0 {
		key += " " + t[0]
	}
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	if s.seen[key] {
		return
	}
	s.seen[key] = true
	cp := make(map[string][]string, len(ctx))
	for k, v := range ctx {
		cp[k] = v
	}
	s.out = append(s.out, authRequest{action: action, resource: resource, context: cp})
}

// requestTags are the aws:RequestTag/<key> and aws:TagKeys keys of tags a
// call asks for.
func requestTags(tags map[string]string, extra map[string][]string) map[string][]string {
	ctx := map[string][]string{}
	keys := make([]string, 0, len(tags))
	for k, v := range tags {
		ctx["aws:requesttag/"+strings.ToLower(k)] = []string{v}
		keys = append(keys, k)
	}
	if len(keys) > 0 {
		sort.Strings(keys)
		ctx["aws:tagkeys"] = keys
	}
	for k, v := range extra {
		ctx[k] = v
	}
	return ctx
}

// resourceTags are the aws:ResourceTag/<key> keys of a resource's tags, and
// for EC2 its own ec2:ResourceTag/<key>.
func resourceTags(tags map[string]string, ec2Too bool) map[string][]string {
	ctx := map[string][]string{}
	for k, v := range tags {
		ctx["aws:resourcetag/"+strings.ToLower(k)] = []string{v}
		if ec2Too {
			ctx["ec2:resourcetag/"+strings.ToLower(k)] = []string{v}
		}
	}
	return ctx
}

func (e *Emulator) ec2ARN(typ, id string) string {
	if typ == "image" {
		return "arn:aws:ec2:" + e.cfg.Region + "::image/" + id
	}
	return "arn:aws:ec2:" + e.cfg.Region + ":" + e.cfg.AccountID + ":" + typ + "/" + id
}

// authzCreateFleet authorizes an instant fleet as EC2 does a launch: the
// fleet; every launch template, subnet, security group and image it uses;
// the network interfaces, instances and volumes it creates (each instance
// type as ec2:InstanceType, the tags asked for as aws:RequestTag), each for
// ec2:CreateFleet and for ec2:RunInstances, which an instant fleet performs
// with the caller's permissions; ec2:CreateTags for every resource it tags
// (ec2:CreateAction CreateFleet); and iam:PassRole for the role of each
// template's instance profile, passed to ec2.amazonaws.com.
func (e *Emulator) authzCreateFleet(req request, _ string) ([]authRequest, *policy) {
	p := req.form
	tags := map[string]map[string]string{}
	for _, m := range p.members("TagSpecification") {
		tags[p.str(m+".ResourceType")] = p.tags(m + ".Tag")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var s authSet
	both := func(resource string, ctx map[string][]string) {
		s.add("ec2:CreateFleet", resource, ctx)
		s.add("ec2:RunInstances", resource, ctx)
	}
	s.add("ec2:CreateFleet", e.ec2ARN("fleet", "*"), requestTags(tags["fleet"], nil))
	var types, roles []string
	for _, c := range p.members("LaunchTemplateConfigs") {
		lt := e.ltBySpecLocked(p, c+".LaunchTemplateSpecification")
		if lt == nil {
			continue
		}
		both(e.ec2ARN("launch-template", lt.ID), resourceTags(lt.Tags, true))
		for _, sg := range lt.instanceGroups() {
			both(e.ec2ARN("security-group", sg), resourceTags(e.sgTagsLocked(sg), true))
		}
		roles = append(roles, e.profileRolesLocked(lt.ProfileName)...)
		overrides := p.members(c + ".Overrides")
		if len(overrides) == 0 {
			types = append(types, lt.InstanceType)
			both(e.ec2ARN("image", lt.ImageID), nil)
		}
		for _, o := range overrides {
			types = append(types, orDefault(p.str(o+".InstanceType"), lt.InstanceType))
			both(e.ec2ARN("image", orDefault(p.str(o+".ImageId"), lt.ImageID)), nil)
			if sub := p.str(o + ".SubnetId"); sub != "" {
				both(e.ec2ARN("subnet", sub), resourceTags(e.subnetTagsLocked(sub), true))
			}
		}
	}
	both(e.ec2ARN("network-interface", "*"), nil)
	for _, t := range types {
		both(e.ec2ARN("instance", "*"), requestTags(tags["instance"], map[string][]string{"ec2:instancetype": {t}}))
	}
	both(e.ec2ARN("volume", "*"), requestTags(tags["volume"], nil))
	for _, typ := range []string{"fleet", "instance", "volume"} {
		if len(tags[typ]) > 0 {
			s.add("ec2:CreateTags", e.ec2ARN(typ, "*"), requestTags(tags[typ], map[string][]string{"ec2:createaction": {"CreateFleet"}}))
		}
	}
	for _, r := range roles {
		s.add("iam:PassRole", r, map[string][]string{"iam:passedtoservice": {"ec2.amazonaws.com"}})
	}
	return s.out, nil
}

func (e *Emulator) ltBySpecLocked(p params, spec string) *LaunchTemplate {
	id, name := p.str(spec+".LaunchTemplateId"), p.str(spec+".LaunchTemplateName")
	for _, lt := range e.lts {
		if (id != "" && lt.ID == id) || (id == "" && lt.Name == name) {
			return lt
		}
	}
	return nil
}

func (e *Emulator) sgTagsLocked(id string) map[string]string {
	if g := e.network.sgs[id]; g != nil {
		return g.Tags
	}
	return nil
}

func (e *Emulator) subnetTagsLocked(id string) map[string]string {
	if s := e.network.subnets[id]; s != nil {
		return s.Tags
	}
	return nil
}

// profileRolesLocked returns the ARNs of an instance profile's roles.
func (e *Emulator) profileRolesLocked(name string) []string {
	prof := e.iam.profiles[name]
	if prof == nil {
		return nil
	}
	var out []string
	for _, r := range prof.Roles {
		if role := e.iam.roles[r]; role != nil {
			out = append(out, e.roleARN(role))
		}
	}
	return out
}

func (e *Emulator) authzCreateLaunchTemplate(req request, action string) ([]authRequest, *policy) {
	var tags map[string]string
	for _, m := range req.form.members("TagSpecification") {
		if req.form.str(m+".ResourceType") == "launch-template" {
			tags = req.form.tags(m + ".Tag")
		}
	}
	var s authSet
	s.add(action, e.ec2ARN("launch-template", "*"), requestTags(tags, nil))
	if len(tags) > 0 {
		s.add("ec2:CreateTags", e.ec2ARN("launch-template", "*"),
			requestTags(tags, map[string][]string{"ec2:createaction": {"CreateLaunchTemplate"}}))
	}
	return s.out, nil
}

func (e *Emulator) authzDeleteLaunchTemplate(req request, action string) ([]authRequest, *policy) {
	e.mu.Lock()
	defer e.mu.Unlock()
	id, name := req.form.str("LaunchTemplateId"), req.form.str("LaunchTemplateName")
	for _, lt := range e.lts {
		if (id != "" && lt.ID == id) || (id == "" && lt.Name == name) {
			return []authRequest{{action, e.ec2ARN("launch-template", lt.ID), resourceTags(lt.Tags, true)}}, nil
		}
	}
	return []authRequest{{action, e.ec2ARN("launch-template", orDefault(id, "*")), map[string][]string{}}}, nil
}

func (e *Emulator) authzTerminateInstances(req request, action string) ([]authRequest, *policy) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var s authSet
	for _, id := range req.form.strings("InstanceId") {
		ctx := map[string][]string{}
		if in := e.instances[id]; in != nil {
			ctx = resourceTags(in.Tags, true)
			ctx["ec2:instancetype"] = []string{in.InstanceType}
		}
		s.add(action, e.ec2ARN("instance", id), ctx)
	}
	return s.out, nil
}

// ec2ResourceTypes name the resource type of an EC2 id by its prefix.
var ec2ResourceTypes = map[string]string{"i": "instance", "lt": "launch-template", "subnet": "subnet", "sg": "security-group",
	"vol": "volume", "ami": "image", "fleet": "fleet", "eni": "network-interface", "vpc": "vpc"}

func (e *Emulator) authzCreateTags(req request, action string) ([]authRequest, *policy) {
	tags := map[string]string{}
	for _, m := range req.form.members("Tag") {
		tags[req.form.str(m+".Key")] = req.form.str(m + ".Value")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var s authSet
	for _, id := range req.form.strings("ResourceId") {
		prefix, _, _ := strings.Cut(id, "-")
		ctx := requestTags(tags, nil)
		existing := map[string]string{}
		if in := e.instances[id]; in != nil {
			existing = in.Tags
		} else if lt := e.lts[id]; lt != nil {
			existing = lt.Tags
		}
		for k, v := range resourceTags(existing, true) {
			ctx[k] = v
		}
		s.add(action, e.ec2ARN(orDefault(ec2ResourceTypes[prefix], prefix), id), ctx)
	}
	return s.out, nil
}

func (e *Emulator) profileARNLocked(name, path string) string {
	if prof := e.iam.profiles[name]; prof != nil {
		path = prof.Path
	}
	return "arn:aws:iam::" + e.cfg.AccountID + ":instance-profile" + orDefault(path, "/") + name
}

// authzCreateInstanceProfile: tags asked for at creation also need
// iam:TagInstanceProfile.
func (e *Emulator) authzCreateInstanceProfile(req request, action string) ([]authRequest, *policy) {
	e.mu.Lock()
	defer e.mu.Unlock()
	tags := req.form.tags("Tags.member")
	arn := e.profileARNLocked(req.form.str("InstanceProfileName"), req.form.str("Path"))
	var s authSet
	s.add(action, arn, requestTags(tags, nil))
	if len(tags) > 0 {
		s.add("iam:TagInstanceProfile", arn, requestTags(tags, nil))
	}
	return s.out, nil
}

// authzAddRoleToInstanceProfile: the caller passes the role, which needs
// iam:PassRole on it (for EC2, which the profile is for).
func (e *Emulator) authzAddRoleToInstanceProfile(req request, action string) ([]authRequest, *policy) {
	e.mu.Lock()
	defer e.mu.Unlock()
	name := req.form.str("InstanceProfileName")
	var tags map[string]string
	if prof := e.iam.profiles[name]; prof != nil {
		tags = prof.Tags
	}
	var s authSet
	s.add(action, e.profileARNLocked(name, ""), resourceTags(tags, false))
	roleARN := "arn:aws:iam::" + e.cfg.AccountID + ":role/" + req.form.str("RoleName")
	if r := e.iam.roles[req.form.str("RoleName")]; r != nil {
		roleARN = e.roleARN(r)
	}
	s.add("iam:PassRole", roleARN, map[string][]string{"iam:passedtoservice": {"ec2.amazonaws.com"}})
	return s.out, nil
}

// authzIAM authorizes the other IAM calls on the role or instance profile
// they name, with its tags (and, creating a role with tags, iam:TagRole).
func (e *Emulator) authzIAM(req request, action string) ([]authRequest, *policy) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := req.form
	var s authSet
	switch {
	case p.str("InstanceProfileName") != "":
		name := p.str("InstanceProfileName")
		var tags map[string]string
		if prof := e.iam.profiles[name]; prof != nil {
			tags = prof.Tags
		}
		s.add(action, e.profileARNLocked(name, p.str("Path")), resourceTags(tags, false))
	case p.str("RoleName") != "":
		name := p.str("RoleName")
		arn := "arn:aws:iam::" + e.cfg.AccountID + ":role" + orDefault(p.str("Path"), "/") + name
		ctx := requestTags(p.tags("Tags.member"), nil)
		if r := e.iam.roles[name]; r != nil {
			arn, ctx = e.roleARN(r), resourceTags(r.tags, false)
		}
		if pa := p.str("PolicyArn"); pa != "" {
			ctx["iam:policyarn"] = []string{pa}
		}
		s.add(action, arn, ctx)
		if action == "iam:CreateRole" && len(p.tags("Tags.member")) > 0 {
			s.add("iam:TagRole", arn, ctx)
		}
	default:
		s.add(action, "*", map[string][]string{})
	}
	return s.out, nil
}

// authzGetParameter authorizes on the parameter's ARN; AWS's public
// parameters (/aws/service/...) have no account in theirs.
func (e *Emulator) authzGetParameter(req request, action string) ([]authRequest, *policy) {
	var in getParameterInput
	_ = json.Unmarshal(req.body, &in)
	name := in.Name
	if !strings.HasPrefix(name, "/") {
		name = "/" + name
	}
	account := e.cfg.AccountID
	if strings.HasPrefix(name, "/aws/") {
		account = ""
	}
	return []authRequest{{action, "arn:aws:ssm:" + e.cfg.Region + ":" + account + ":parameter" + name, map[string][]string{}}}, nil
}

// authzSQS authorizes on the queue's ARN, with the queue's policy as the
// resource policy.
func (e *Emulator) authzSQS(req request, action string) ([]authRequest, *policy) {
	var in sqsQueueInput
	_ = json.Unmarshal(req.body, &in)
	name := in.QueueName
	if in.QueueURL != "" {
		name = in.QueueURL[strings.LastIndex(in.QueueURL, "/")+1:]
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	arn := "arn:aws:sqs:" + e.cfg.Region + ":" + e.cfg.AccountID + ":" + name
	var resource *policy
	ctx := map[string][]string{}
	if q := e.sqs.byName[name]; q != nil {
		resource = q.policyLocked()
		ctx = resourceTags(q.tags, false)
	}
	return []authRequest{{action, arn, ctx}}, resource
}

// authzEKS authorizes on the cluster a path names.
func (e *Emulator) authzEKS(req request, action string) ([]authRequest, *policy) {
	parts := strings.Split(strings.Trim(req.path, "/"), "/")
	resource := "*"
	if len(parts) >= 2 && parts[0] == "clusters" {
		resource = "arn:aws:eks:" + e.cfg.Region + ":" + e.cfg.AccountID + ":cluster/" + parts[1]
	}
	return []authRequest{{action, resource, map[string][]string{}}}, nil
}
