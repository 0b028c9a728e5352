package awsemu

import (
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// refAction is one action of AWS's Service Authorization Reference: the
// resource types it is authorized on and the condition keys of the action
// itself (zz_generated.iamreference.go holds them, from iam-data).
type refAction struct {
	keys      []string
	resources []refResource
}

// refResource is one resource type of an action: whether every call names
// one, and the condition keys AWS puts in the request context for it.
type refResource struct {
	typ      string
	required bool
	keys     []string
}

// refType is a resource type: its ARN format and its own condition keys.
type refType struct {
	arn  string
	keys []string
}

// alternativeTypes are the actions whose required resource types are
// alternatives (a call names one load balancer, of either type) and which
// AWS also authorizes on "*", for a resource of a type the reference does
// not list: ARC's zonal shift calls on an EKS cluster, scoped by
// arc-zonal-shift:ResourceIdentifier (ARC's IAM guide for zonal shift).
var alternativeTypes = map[string]bool{"arc-zonal-shift:StartZonalShift": true, "arc-zonal-shift:UpdateZonalShift": true,
	"arc-zonal-shift:CancelZonalShift": true, "arc-zonal-shift:GetManagedResource": true}

// checkReference holds a call's authorizations to AWS's reference, so that
// the emulator asks for what AWS would and nothing else: every action is in
// the reference; each resource is "*" for an action without resource types,
// else of one of the action's types; every required type is asked for; and
// every condition key is the action's, its resource type's or a global one,
// with a value of the key's type. An error is the emulator's own fault.
func checkReference(reqs []authRequest) error {
	asked := map[string]map[string]bool{} // action -> resource types asked for
	for _, r := range reqs {
		ref, ok := iamReference[r.action]
		if !ok {
			return fmt.Errorf("%s is not in the emulator's IAM reference table: add it to hack/iamref and run it", r.action)
		}
		res, err := ref.resourceOf(r.action, r.resource)
		if err != nil {
			return err
		}
		if asked[r.action] == nil {
			asked[r.action] = map[string]bool{}
		}
		if res != nil {
			asked[r.action][res.typ] = true
		}
		if err := ref.checkKeys(r, res); err != nil {
			return err
		}
	}
	for action, types := range asked {
		if alternativeTypes[action] {
			continue
		}
		for _, rt := range iamReference[action].resources {
			if rt.required && !types[rt.typ] {
				return fmt.Errorf("%s is asked for without its required resource type %s", action, rt.typ)
			}
		}
	}
	return nil
}

// resourceOf names the resource type an ARN is of, for the action.
func (a refAction) resourceOf(action, arn string) (*refResource, error) {
	if arn == "*" {
		if alternativeTypes[action] {
			return nil, nil
		}
		for _, rt := range a.resources {
			if rt.required {
				return nil, fmt.Errorf("%s on * though it names a %s", action, rt.typ)
			}
		}
		return nil, nil
	}
	svc, _, _ := strings.Cut(action, ":")
	for i, rt := range a.resources {
		if arnPattern(iamReferenceTypes[svc+"/"+rt.typ].arn).MatchString(arn) {
			return &a.resources[i], nil
		}
	}
	return nil, fmt.Errorf("%s on %s, which is of none of the action's resource types", action, arn)
}

var arnPatterns sync.Map // ARN format -> *regexp.Regexp

// arnPattern matches the ARNs of a format such as
// arn:${Partition}:ec2:${Region}:${Account}:instance/${InstanceId}: each
// variable is any text without a colon, and the last may hold a path.
func arnPattern(format string) *regexp.Regexp {
	if re, ok := arnPatterns.Load(format); ok {
		return re.(*regexp.Regexp)
	}
	parts := regexp.MustCompile(`\$\{[^}]*\}`).Split(format, -1)
	var b strings.Builder
	b.WriteString("^")
	for i, p := range parts {
		b.WriteString(regexp.QuoteMeta(p))
		switch {
		case i == len(parts)-2:
			b.WriteString(".+")
		case i < len(parts)-1:
			b.WriteString("[^:]*")
		}
	}
	b.WriteString("$")
	re := regexp.MustCompile(b.String())
	arnPatterns.Store(format, re)
	return re
}

// tagKeys are global keys that AWS nevertheless puts in a request's context
// only for the resource types the reference lists them for.
var tagKeys = map[string]bool{"aws:requesttag/": true, "aws:resourcetag/": true, "aws:tagkeys": true}

func (a refAction) checkKeys(r authRequest, res *refResource) error {
	listed := map[string]bool{}
	for _, k := range a.keys {
		listed[keyName(k)] = true
	}
	if res != nil {
		svc, _, _ := strings.Cut(r.action, ":")
		for _, k := range append(slices.Clone(res.keys), iamReferenceTypes[svc+"/"+res.typ].keys...) {
			listed[keyName(k)] = true
		}
	}
	for key, values := range r.context {
		name := key
		if i := strings.Index(key, "/"); i >= 0 {
			name = key[:i+1]
		}
		typ, known := iamReferenceKeyTypes[name]
		global := strings.HasPrefix(name, "aws:") && !tagKeys[name]
		if !known || (!global && !listed[name]) {
			return fmt.Errorf("%s on %s carries the condition key %s, which AWS does not give it", r.action, r.resource, key)
		}
		if err := checkKeyType(typ, values); err != nil {
			return fmt.Errorf("%s on %s: condition key %s: %w", r.action, r.resource, key, err)
		}
	}
	return nil
}

func keyName(key string) string {
	k, _, _ := strings.Cut(strings.ToLower(key), "${")
	return k
}

// checkKeyType checks a key's values against its type in the reference.
func checkKeyType(typ string, values []string) error {
	if !strings.HasPrefix(typ, "ArrayOf") && len(values) > 1 {
		return fmt.Errorf("%d values for a single-valued %s key", len(values), typ)
	}
	for _, v := range values {
		var ok bool
		switch strings.TrimPrefix(typ, "ArrayOf") {
		case "Bool":
			ok = v == "true" || v == "false"
		case "Numeric":
			_, err := strconv.ParseFloat(v, 64)
			ok = err == nil
		case "Date": // an ISO 8601 time, or epoch seconds
			_, err := time.Parse(time.RFC3339, v)
			_, errEpoch := strconv.ParseInt(v, 10, 64)
			ok = err == nil || errEpoch == nil
		case "ARN":
			ok = strings.HasPrefix(v, "arn:")
		case "IPAddress":
			ok = net.ParseIP(v) != nil
		default:
			ok = true
		}
		if !ok {
			return fmt.Errorf("%q is not a %s", v, typ)
		}
	}
	return nil
}
