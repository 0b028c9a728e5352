package awsemu

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// policyKind says which elements a policy document must and must not have:
// identity policies name resources and no principal, trust and resource
// policies name a principal.
type policyKind int

const (
	identityPolicy policyKind = iota
	trustPolicy
	resourcePolicy
)

// policy is a parsed IAM policy document (the IAM JSON policy grammar).
type policy struct {
	doc        string // as written
	statements []statement
}

// statement is one Statement element. Exactly one of actions/notActions is
// set; for identity policies, exactly one of resources/notResources.
type statement struct {
	sid   string
	allow bool
	// actions are the Action element's patterns, or NotAction's when notAction.
	actions   []string
	notAction bool
	// resources are Resource's patterns, or NotResource's when notResource;
	// a trust policy may have neither, and then names every resource.
	resources                []string
	notResource, anyResource bool
	principal, notPrincipal  principalSet
	conditions               []condition
}

// principalSet is a Principal element: "*" or a map of AWS, Service,
// Federated and CanonicalUser to their values.
type principalSet struct {
	set  bool
	any  bool                // "Principal": "*"
	byID map[string][]string // type -> values
}

// condition is one key of one operator of a Condition block.
type condition struct {
	operator string // as written, e.g. ForAllValues:StringLikeIfExists
	key      string // lower case: condition keys are case-insensitive
	values   []string
}

// rawStatement is the JSON of a statement; every field is optional in the
// grammar, so presence is checked after decoding.
type rawStatement struct {
	Sid          string                                `json:"Sid"`
	Effect       string                                `json:"Effect"`
	Principal    json.RawMessage                       `json:"Principal"`
	NotPrincipal json.RawMessage                       `json:"NotPrincipal"`
	Action       stringOrList                          `json:"Action"`
	NotAction    stringOrList                          `json:"NotAction"`
	Resource     stringOrList                          `json:"Resource"`
	NotResource  stringOrList                          `json:"NotResource"`
	Condition    map[string]map[string]json.RawMessage `json:"Condition"`
}

// stringOrList is an element that is a string or a list of strings.
type stringOrList struct {
	set    bool
	values []string
}

func (s *stringOrList) UnmarshalJSON(b []byte) error {
	s.set = true
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		s.values = []string{one}
		return nil
	}
	return json.Unmarshal(b, &s.values)
}

// policyVersions are the grammar's versions; 2012-10-17 is the current one.
var policyVersions = map[string]bool{"2012-10-17": true, "2008-10-17": true}

// parsePolicy parses a policy document strictly, as IAM's
// MalformedPolicyDocument checks do: unknown elements, a missing Effect or
// Action, a Principal in an identity policy or none in a trust policy, and
// unknown condition operators are errors.
func parsePolicy(doc string, kind policyKind) (*policy, error) {
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.DisallowUnknownFields()
	var raw struct {
		Version   string          `json:"Version"`
		ID        string          `json:"Id"`
		Statement json.RawMessage `json:"Statement"`
	}
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("syntax errors in policy: %w", err)
	}
	if raw.Version != "" && !policyVersions[raw.Version] {
		return nil, fmt.Errorf("the policy's Version %q is not 2012-10-17 or 2008-10-17", raw.Version)
	}
	stmts, err := rawStatements(raw.Statement)
	if err != nil {
		return nil, err
	}
	p := &policy{doc: doc}
	for i, rs := range stmts {
		s, err := rs.parse(kind)
		if err != nil {
			return nil, fmt.Errorf("statement %d: %w", i+1, err)
		}
		p.statements = append(p.statements, s)
	}
	return p, nil
}

func rawStatements(b json.RawMessage) ([]rawStatement, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, fmt.Errorf("the policy has no Statement")
	}
	var list []json.RawMessage
	if b[0] == '{' {
		list = []json.RawMessage{b}
	} else if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("syntax errors in policy: Statement: %w", err)
	}
	out := make([]rawStatement, 0, len(list))
	for _, item := range list {
		dec := json.NewDecoder(bytes.NewReader(item))
		dec.DisallowUnknownFields()
		var rs rawStatement
		if err := dec.Decode(&rs); err != nil {
			return nil, fmt.Errorf("syntax errors in policy: %w", err)
		}
		out = append(out, rs)
	}
	return out, nil
}

func (rs rawStatement) parse(kind policyKind) (statement, error) {
	s := statement{sid: rs.Sid, actions: rs.Action.values, notAction: rs.NotAction.set,
		resources: rs.Resource.values, notResource: rs.NotResource.set, anyResource: !rs.Resource.set && !rs.NotResource.set}
	if s.notAction {
		s.actions = rs.NotAction.values
	}
	if s.notResource {
		s.resources = rs.NotResource.values
	}
	switch rs.Effect {
	case "Allow":
		s.allow = true
	case "Deny":
	default:
		return s, fmt.Errorf("the statement's Effect %q is not Allow or Deny", rs.Effect)
	}
	if rs.Action.set == rs.NotAction.set {
		return s, fmt.Errorf("a statement needs exactly one of Action and NotAction")
	}
	if kind == identityPolicy && rs.Resource.set == rs.NotResource.set {
		return s, fmt.Errorf("a statement needs exactly one of Resource and NotResource")
	}
	var err error
	if s.principal, err = parsePrincipal(rs.Principal); err != nil {
		return s, err
	}
	if s.notPrincipal, err = parsePrincipal(rs.NotPrincipal); err != nil {
		return s, err
	}
	hasPrincipal := s.principal.set || s.notPrincipal.set
	if kind == identityPolicy && hasPrincipal {
		return s, fmt.Errorf("has prohibited field Principal: an identity-based policy names no principal")
	}
	if kind != identityPolicy && !hasPrincipal {
		return s, fmt.Errorf("missing required field Principal")
	}
	s.conditions, err = parseConditions(rs.Condition)
	return s, err
}

func parsePrincipal(b json.RawMessage) (principalSet, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return principalSet{}, nil
	}
	var star string
	if err := json.Unmarshal(b, &star); err == nil {
		if star != "*" {
			return principalSet{}, fmt.Errorf("invalid principal %q: use \"*\" or a map such as {\"AWS\": ...}", star)
		}
		return principalSet{set: true, any: true}, nil
	}
	var m map[string]stringOrList
	if err := json.Unmarshal(b, &m); err != nil {
		return principalSet{}, fmt.Errorf("invalid principal: %w", err)
	}
	ps := principalSet{set: true, byID: map[string][]string{}}
	for typ, v := range m {
		switch typ {
		case "AWS", "Service", "Federated", "CanonicalUser":
			ps.byID[typ] = v.values
		default:
			return principalSet{}, fmt.Errorf("invalid principal type %q: use AWS, Service, Federated or CanonicalUser", typ)
		}
	}
	return ps, nil
}

func parseConditions(raw map[string]map[string]json.RawMessage) ([]condition, error) {
	ops := make([]string, 0, len(raw))
	for op := range raw {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	var out []condition
	for _, op := range ops {
		if _, _, _, err := splitOperator(op); err != nil {
			return nil, err
		}
		for key, v := range raw[op] {
			values, err := conditionValues(v)
			if err != nil {
				return nil, fmt.Errorf("condition %s %s: %w", op, key, err)
			}
			out = append(out, condition{operator: op, key: strings.ToLower(key), values: values})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].operator == out[j].operator && out[i].key < out[j].key })
	return out, nil
}

// conditionValues reads a condition's value: a string, number or boolean, or
// a list of them; JSON booleans and numbers compare as their text.
func conditionValues(b json.RawMessage) ([]string, error) {
	var list []any
	if err := json.Unmarshal(b, &list); err != nil {
		var one any
		if err := json.Unmarshal(b, &one); err != nil {
			return nil, err
		}
		list = []any{one}
	}
	out := make([]string, 0, len(list))
	for _, v := range list {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case bool:
			out = append(out, strconv.FormatBool(x))
		case float64:
			out = append(out, strconv.FormatFloat(x, 'f', -1, 64))
		default:
			return nil, fmt.Errorf("value %v is not a string, number or boolean", v)
		}
	}
	return out, nil
}

// policySize is a document's size as IAM counts it against its quotas:
// characters other than white space.
func policySize(doc string) int {
	n := 0
	for _, r := range doc {
		if !unicode.IsSpace(r) {
			n++
		}
	}
	return n
}
