package awsemu

import (
	"encoding/json"
	"net/url"
	"slices"
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
	"iam:CreateServiceLinkedRole":  (*Emulator).authzCreateServiceLinkedRole,
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
	"iam":             (*Emulator).authzIAM,
	"sqs":             (*Emulator).authzSQS,
	"eks":             (*Emulator).authzEKS,
	"lambda":          (*Emulator).authzLambda,
	"logs":            (*Emulator).authzLogs,
	"events":          (*Emulator).authzEvents,
	"arc-zonal-shift": (*Emulator).authzARC,
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
	seen map[string]int // key -> index in out
}

func (s *authSet) add(action, resource string, ctx map[string][]string) {
	s.addFor(action, resource, ctx, -1)
}

// addFor adds an authorization one launch of a fleet (the override at index
// launch, or none when -1) needs; launches that need the same share it.
func (s *authSet) addFor(action, resource string, ctx map[string][]string, launch int) {
	key := action + " " + resource
	for _, k := range sortedKeys(ctx) {
		key += " " + k + "=" + strings.Join(ctx[k], ",")
	}
	if s.seen == nil {
		s.seen = map[string]int{}
	}
	i, ok := s.seen[key]
	if !ok {
		cp := make(map[string][]string, len(ctx))
		for k, v := range ctx {
			cp[k] = v
		}
		i = len(s.out)
		s.seen[key] = i
		s.out = append(s.out, authRequest{action: action, resource: resource, context: cp})
	}
	if launch >= 0 && !slices.Contains(s.out[i].launches, launch) {
		s.out[i].launches = append(s.out[i].launches, launch)
	}
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
	if typ == "image" || typ == "snapshot" { // AWS's own, with no account in their ARNs
		return "arn:aws:ec2:" + e.cfg.Region + "::" + typ + "/" + id
	}
	return "arn:aws:ec2:" + e.cfg.Region + ":" + e.cfg.AccountID + ":" + typ + "/" + id
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
			return []authRequest{ar(action, e.ec2ARN("launch-template", lt.ID), resourceTags(lt.Tags, true))}, nil
		}
	}
	return []authRequest{ar(action, e.ec2ARN("launch-template", orDefault(id, "*")), map[string][]string{})}, nil
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
	case p.str("UserName") != "":
		ctx := requestTags(p.tags("Tags.member"), nil)
		if u := e.iam.users[p.str("UserName")]; u != nil {
			ctx = resourceTags(u.tags, false)
		}
		if pa := p.str("PolicyArn"); pa != "" {
			ctx["iam:policyarn"] = []string{pa}
		}
		arn := e.userResourceLocked(p.str("UserName"))
		s.add(action, arn, ctx)
		if action == "iam:CreateUser" && len(p.tags("Tags.member")) > 0 {
			s.add("iam:TagUser", arn, ctx)
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
	return []authRequest{ar(action, "arn:aws:ssm:"+e.cfg.Region+":"+account+":parameter"+name, map[string][]string{})}, nil
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
	if action == "sqs:CreateQueue" && len(in.Tags) > 0 { // tags at creation need sqs:TagQueue too
		ctx = requestTags(in.Tags, nil)
		return []authRequest{ar(action, arn, ctx), ar("sqs:TagQueue", arn, requestTags(in.Tags, nil))}, resource
	}
	return []authRequest{ar(action, arn, ctx)}, resource
}

// authzEKS authorizes on the cluster a path names, or on the access entry
// or Pod Identity association under it that the path goes on to name.
func (e *Emulator) authzEKS(req request, action string) ([]authRequest, *policy) {
	parts := strings.Split(strings.Trim(req.path, "/"), "/")
	resource := "*"
	if len(parts) >= 2 && parts[0] == "clusters" {
		resource = "arn:aws:eks:" + e.cfg.Region + ":" + e.cfg.AccountID + ":cluster/" + parts[1]
	}
	if action == "eks:CreatePodIdentityAssociation" { // the association passes its role to EKS's Pod Identity
		var in struct {
			RoleARN string `json:"roleArn"`
		}
		_ = json.Unmarshal(req.body, &in)
		return []authRequest{ar(action, resource, map[string][]string{}),
			ar("iam:PassRole", in.RoleARN, map[string][]string{"iam:passedtoservice": {"pods.eks.amazonaws.com"}})}, nil
	}
	if len(parts) == 4 {
		id, _ := url.PathUnescape(parts[3])
		switch parts[2] {
		case "access-entries": // access-entry/<cluster>/<role|user>/<account>/<name>/<uuid>
			principal := strings.SplitN(strings.TrimPrefix(id, "arn:aws:iam::"), ":", 2)
			if len(principal) == 2 {
				resource = "arn:aws:eks:" + e.cfg.Region + ":" + e.cfg.AccountID + ":access-entry/" + parts[1] + "/" +
					strings.Replace(principal[1], "/", "/"+principal[0]+"/", 1) + "/*"
			}
		case "pod-identity-associations":
			resource = "arn:aws:eks:" + e.cfg.Region + ":" + e.cfg.AccountID + ":podidentityassociation/" + parts[1] + "/" + id
		}
	}
	return []authRequest{ar(action, resource, map[string][]string{})}, nil
}

// ar is one authorization, for no launch in particular.
func ar(action, resource string, ctx map[string][]string) authRequest {
	return authRequest{action: action, resource: resource, context: ctx}
}
