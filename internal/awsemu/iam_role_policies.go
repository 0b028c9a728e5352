package awsemu

import (
	"fmt"
	"net/url"
	"strings"
)

type xmlAttachedPolicy struct {
	Name string `xml:"PolicyName"`
	Arn  string `xml:"PolicyArn"`
}

// iamPutRolePolicy adds or replaces an inline policy; all of a role's inline
// policies together stay within IAM's 10,240-character quota.
func (e *Emulator) iamPutRolePolicy(p params) (any, *APIError) {
	r, apiErr := e.roleLocked(p.str("RoleName"))
	if apiErr != nil {
		return nil, apiErr
	}
	name, doc := p.str("PolicyName"), p.str("PolicyDocument")
	if apiErr := checkInlinePolicy(name, doc, r.inline, maxInlinePolicySize, "role "+r.name); apiErr != nil {
		return nil, apiErr
	}
	r.inline[name] = doc
	return nil, nil
}

// checkInlinePolicy checks an inline policy's name and grammar, and that
// with the others of its user or role (but one of its name) it fits quota.
func checkInlinePolicy(name, doc string, others map[string]string, quota int, owner string) *APIError {
	if !policyNamePattern.MatchString(name) {
		return &APIError{"ValidationError", "The specified value for policyName is invalid"}
	}
	if _, err := parsePolicy(doc, identityPolicy); err != nil {
		return &APIError{"MalformedPolicyDocument", err.Error()}
	}
	total := policySize(doc)
	for n, d := range others {
		if n != name {
			total += policySize(d)
		}
	}
	if total > quota {
		return &APIError{"LimitExceeded", fmt.Sprintf("Maximum policy size of %d bytes exceeded for %s", quota, owner)}
	}
	return nil
}

func (e *Emulator) iamGetRolePolicy(p params) (any, *APIError) {
	r, apiErr := e.roleLocked(p.str("RoleName"))
	if apiErr != nil {
		return nil, apiErr
	}
	doc, ok := r.inline[p.str("PolicyName")]
	if !ok {
		return nil, &APIError{"NoSuchEntity", "The role policy with name " + p.str("PolicyName") + " cannot be found."}
	}
	return struct {
		RoleName   string `xml:"RoleName"`
		PolicyName string `xml:"PolicyName"`
		Document   string `xml:"PolicyDocument"`
	}{r.name, p.str("PolicyName"), url.QueryEscape(doc)}, nil
}

func (e *Emulator) iamDeleteRolePolicy(p params) (any, *APIError) {
	r, apiErr := e.roleLocked(p.str("RoleName"))
	if apiErr != nil {
		return nil, apiErr
	}
	if _, ok := r.inline[p.str("PolicyName")]; !ok {
		return nil, &APIError{"NoSuchEntity", "The role policy with name " + p.str("PolicyName") + " cannot be found."}
	}
	delete(r.inline, p.str("PolicyName"))
	return nil, nil
}

func (e *Emulator) iamListRolePolicies(p params) (any, *APIError) {
	r, apiErr := e.roleLocked(p.str("RoleName"))
	if apiErr != nil {
		return nil, apiErr
	}
	return struct {
		Names     []string `xml:"PolicyNames>member"`
		Truncated bool     `xml:"IsTruncated"`
	}{sortedKeys(r.inline), false}, nil
}

func (e *Emulator) iamAttachRolePolicy(p params) (any, *APIError) {
	r, apiErr := e.roleLocked(p.str("RoleName"))
	if apiErr != nil {
		return nil, apiErr
	}
	r.attached, apiErr = e.attachLocked(r.attached, p.str("PolicyArn"))
	return nil, apiErr
}

func (e *Emulator) iamDetachRolePolicy(p params) (any, *APIError) {
	r, apiErr := e.roleLocked(p.str("RoleName"))
	if apiErr != nil {
		return nil, apiErr
	}
	r.attached, apiErr = detach(r.attached, p.str("PolicyArn"))
	return nil, apiErr
}

func (e *Emulator) iamListAttachedRolePolicies(p params) (any, *APIError) {
	r, apiErr := e.roleLocked(p.str("RoleName"))
	if apiErr != nil {
		return nil, apiErr
	}
	return e.attachedBodyLocked(r.attached), nil
}

// attachLocked adds a managed policy to a role's or user's, once, within
// IAM's quota of 10.
func (e *Emulator) attachLocked(attached []string, arn string) ([]string, *APIError) {
	if e.managedPolicyLocked(arn) == nil {
		return attached, &APIError{"NoSuchEntity", "Policy " + arn + " does not exist or is not attachable."}
	}
	if contains(attached, arn) {
		return attached, nil
	}
	if len(attached) >= maxManagedPolicies {
		return attached, &APIError{"LimitExceeded", "Cannot exceed quota for PoliciesPerRole: 10"}
	}
	return append(attached, arn), nil
}

func detach(attached []string, arn string) ([]string, *APIError) {
	for i, a := range attached {
		if a == arn {
			return append(attached[:i], attached[i+1:]...), nil
		}
	}
	return attached, &APIError{"NoSuchEntity", "Policy " + arn + " was not found."}
}

// attachedBodyLocked is a List*AttachedPolicies answer.
func (e *Emulator) attachedBodyLocked(attached []string) any {
	out := struct {
		Policies  []xmlAttachedPolicy `xml:"AttachedPolicies>member"`
		Truncated bool                `xml:"IsTruncated"`
	}{}
	for _, arn := range attached {
		out.Policies = append(out.Policies, xmlAttachedPolicy{e.managedPolicyLocked(arn).name, arn})
	}
	return out
}

func (e *Emulator) iamGetPolicy(p params) (any, *APIError) {
	mp := e.managedPolicyLocked(p.str("PolicyArn"))
	if mp == nil {
		return nil, &APIError{"NoSuchEntity", "Policy " + p.str("PolicyArn") + " was not found."}
	}
	type xmlPolicy struct {
		Name       string `xml:"PolicyName"`
		ID         string `xml:"PolicyId"`
		Arn        string `xml:"Arn"`
		Path       string `xml:"Path"`
		Version    string `xml:"DefaultVersionId"`
		Attachable bool   `xml:"IsAttachable"`
	}
	return struct {
		Policy xmlPolicy `xml:"Policy"`
	}{xmlPolicy{mp.name, "ANPA" + strings.ToUpper(mp.name), mp.arn, strings.TrimSuffix(strings.TrimPrefix(mp.arn, "arn:aws:iam::aws:policy"), mp.name),
		"v1", true}}, nil
}
