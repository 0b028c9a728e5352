package awsemu

import (
	"encoding/base64"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// authRequest is one authorization AWS makes for a call: an action on a
// resource, in a request context. One call may need several (a launch is
// authorized on its instance, its volumes, its subnet and its template).
type authRequest struct {
	action   string              // service:Action, e.g. ec2:RunInstances
	resource string              // an ARN, or "*" for an action without resource-level permissions
	context  map[string][]string // condition key, lower case -> values
	// launches are the overrides of an instant fleet (by index) whose
	// launches need this authorization: a denial fails those launches, in
	// the fleet's errors, not the call.
	launches []int
}

// subject is who makes a request, as Principal elements name it.
type subject struct {
	account   string
	arns      []string // the session's ARN and its role's ARN; the root user's ARN for the administrator
	services  []string // a service principal, e.g. events.amazonaws.com
	federated []string // an identity provider, for AssumeRoleWithWebIdentity
}

// decision is the outcome of evaluating policies, in AWS's order of precedence.
type decision int

const (
	implicitDeny decision = iota
	allowed
	explicitDeny
)

// decide evaluates one policy: an explicit deny wins over any allow, and
// without a matching allow the request is implicitly denied. who is nil for
// identity policies, which name no principal.
func (p *policy) decide(r authRequest, who *subject) decision {
	d := implicitDeny
	for _, s := range p.statements {
		if !s.applies(r, who) {
			continue
		}
		if !s.allow {
			return explicitDeny
		}
		d = allowed
	}
	return d
}

// decideAll combines a principal's identity policies with the resource's
// policy, for a principal of the resource's own account: an explicit deny in
// any of them denies; otherwise an allow in either allows.
func decideAll(r authRequest, who *subject, identity []*policy, resource *policy) decision {
	d := implicitDeny
	for _, p := range identity {
		d = max(d, p.decide(r, nil))
	}
	if resource != nil {
		d = max(d, resource.decide(r, who))
	}
	return d
}

func (s statement) applies(r authRequest, who *subject) bool {
	if s.principal.set && !s.principal.matches(who) {
		return false
	}
	if s.notPrincipal.set && s.notPrincipal.matches(who) {
		return false
	}
	if matchAny(s.actions, r.action, true) == s.notAction {
		return false
	}
	if !s.anyResource && matchAny(s.resources, r.resource, false) == s.notResource {
		return false
	}
	for _, c := range s.conditions {
		if !c.holds(r.context) {
			return false
		}
	}
	return true
}

func (ps principalSet) matches(who *subject) bool {
	if ps.any {
		return true
	}
	if who == nil {
		return false
	}
	for typ, values := range ps.byID {
		for _, v := range values {
			switch typ {
			case "AWS":
				if v == "*" || v == who.account || v == "arn:aws:iam::"+who.account+":root" || contains(who.arns, v) {
					return true
				}
			case "Service":
				if contains(who.services, v) {
					return true
				}
			case "Federated":
				if contains(who.federated, v) {
					return true
				}
			}
		}
	}
	return false
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func matchAny(patterns []string, value string, foldCase bool) bool {
	for _, p := range patterns {
		if foldCase {
			if wildcard(strings.ToLower(p), strings.ToLower(value)) {
				return true
			}
		} else if wildcard(p, value) {
			return true
		}
	}
	return false
}

// negatedOperators name the positive operator each negated one inverts.
var negatedOperators = map[string]string{
	"StringNotEquals": "StringEquals", "StringNotEqualsIgnoreCase": "StringEqualsIgnoreCase", "StringNotLike": "StringLike",
	"NumericNotEquals": "NumericEquals", "DateNotEquals": "DateEquals", "NotIpAddress": "IpAddress",
	"ArnNotEquals": "ArnEquals", "ArnNotLike": "ArnLike",
}

// matchers compare one context value with one policy value.
var matchers = map[string]func(ctx, pol string) bool{
	"StringEquals":           func(c, p string) bool { return c == p },
	"StringEqualsIgnoreCase": strings.EqualFold,
	"StringLike":             func(c, p string) bool { return wildcard(p, c) },
	"NumericEquals":          numericCondition(func(c, p float64) bool { return c == p }),
	"NumericLessThan":        numericCondition(func(c, p float64) bool { return c < p }),
	"NumericLessThanEquals":  numericCondition(func(c, p float64) bool { return c <= p }),
	"NumericGreaterThan":     numericCondition(func(c, p float64) bool { return c > p }),
	"NumericGreaterThanEquals": numericCondition(func(c, p float64) bool {
		return c >= p
	}),
	"DateEquals":            dateCondition(func(c, p time.Time) bool { return c.Equal(p) }),
	"DateLessThan":          dateCondition(func(c, p time.Time) bool { return c.Before(p) }),
	"DateLessThanEquals":    dateCondition(func(c, p time.Time) bool { return !c.After(p) }),
	"DateGreaterThan":       dateCondition(func(c, p time.Time) bool { return c.After(p) }),
	"DateGreaterThanEquals": dateCondition(func(c, p time.Time) bool { return !c.Before(p) }),
	"Bool":                  strings.EqualFold,
	"BinaryEquals":          func(c, p string) bool { return base64.StdEncoding.EncodeToString([]byte(c)) == p },
	"IpAddress":             ipInRange,
	"ArnEquals":             arnLike,
	"ArnLike":               arnLike,
}

// splitOperator reads ForAllValues:/ForAnyValue:, the base operator and
// IfExists from an operator as written.
func splitOperator(op string) (set, base string, ifExists bool, err error) {
	base = op
	for _, prefix := range []string{"ForAllValues:", "ForAnyValue:"} {
		if rest, ok := strings.CutPrefix(op, prefix); ok {
			set, base = strings.TrimSuffix(prefix, ":"), rest
		}
	}
	if rest, ok := strings.CutSuffix(base, "IfExists"); ok && base != "Null" {
		base, ifExists = rest, true
	}
	_, known := matchers[base]
	if _, neg := negatedOperators[base]; !known && !neg && base != "Null" {
		return "", "", false, fmt.Errorf("invalid condition operator %q", op)
	}
	return set, base, ifExists, nil
}

// holds evaluates the condition on a request context, by the rules of IAM's
// condition operators: several policy values are alternatives; a key absent
// from the context fails a positive operator and passes a negated one,
// IfExists passes it, ForAllValues passes it and ForAnyValue fails it.
func (c condition) holds(ctx map[string][]string) bool {
	set, base, ifExists, _ := splitOperator(c.operator)
	values, present := ctx[c.key]
	present = present && len(values) > 0
	if base == "Null" {
		for _, v := range c.values {
			if strings.EqualFold(v, "true") != present {
				return true
			}
		}
		return false
	}
	positive, negated := base, false
	if p, ok := negatedOperators[base]; ok {
		positive, negated = p, true
	}
	match := matchers[positive]
	matchesPolicy := func(v string) bool {
		for _, p := range c.values {
			if match(v, p) {
				return true
			}
		}
		return false
	}
	switch {
	case !present && set == "ForAllValues":
		return true
	case !present && set == "ForAnyValue":
		return false
	case !present:
		return ifExists || negated
	case set == "ForAllValues":
		for _, v := range values {
			if matchesPolicy(v) == negated {
				return false
			}
		}
		return true
	case set == "ForAnyValue":
		for _, v := range values {
			if matchesPolicy(v) != negated {
				return true
			}
		}
		return false
	}
	// A single-valued operator: one matching value is enough for a positive
	// operator, and a negated one holds when no value matches.
	for _, v := range values {
		if matchesPolicy(v) {
			return !negated
		}
	}
	return negated
}

func numericCondition(cmp func(c, p float64) bool) func(string, string) bool {
	return func(c, p string) bool {
		x, err1 := strconv.ParseFloat(c, 64)
		y, err2 := strconv.ParseFloat(p, 64)
		return err1 == nil && err2 == nil && cmp(x, y)
	}
}

func dateCondition(cmp func(c, p time.Time) bool) func(string, string) bool {
	parse := func(s string) (time.Time, bool) {
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			return t, true
		}
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Unix(n, 0), true
		}
		return time.Time{}, false
	}
	return func(c, p string) bool {
		x, ok1 := parse(c)
		y, ok2 := parse(p)
		return ok1 && ok2 && cmp(x, y)
	}
}

func ipInRange(c, p string) bool {
	ip := net.ParseIP(c)
	if ip == nil {
		return false
	}
	if !strings.Contains(p, "/") {
		return ip.Equal(net.ParseIP(p))
	}
	_, n, err := net.ParseCIDR(p)
	return err == nil && n.Contains(ip)
}

// arnLike compares an ARN's six colon-separated parts one by one, each with
// wildcards, as ArnLike and ArnEquals do.
func arnLike(c, p string) bool {
	cs, ps := strings.SplitN(c, ":", 6), strings.SplitN(p, ":", 6)
	if len(cs) != 6 || len(ps) != 6 {
		return false
	}
	for i := range cs {
		if !wildcard(ps[i], cs[i]) {
			return false
		}
	}
	return true
}
