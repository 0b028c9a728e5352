package awsemu

import (
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// params reads query-protocol parameters, where nested members are flattened
// into dotted keys with 1-based list indexes (Filter.1.Value.2).
type params struct {
	v        url.Values
	prefixes map[string]bool // every dotted prefix of every key
	// launchDenials are the launches of an instant fleet the authorizer
	// denied: override index -> the fleet's error for it.
	launchDenials map[int]FleetDenial
}

func newParams(v url.Values) params {
	p := params{v: v, prefixes: make(map[string]bool, len(v)*2), launchDenials: map[int]FleetDenial{}}
	for k := range v {
		for i := range len(k) {
			if k[i] == '.' {
				p.prefixes[k[:i]] = true
			}
		}
		p.prefixes[k] = true
	}
	return p
}

func (p params) str(key string) string { return p.v.Get(key) }

func (p params) boolean(key string) bool { return p.v.Get(key) == "true" }

func (p params) integer(key string, def int) int {
	n, err := strconv.Atoi(p.v.Get(key))
	if err != nil {
		return def
	}
	return n
}

// members returns prefix.1, prefix.2, ... for as long as such members exist.
func (p params) members(prefix string) []string {
	var out []string
	for i := 1; ; i++ {
		m := prefix + "." + strconv.Itoa(i)
		if !p.prefixes[m] {
			return out
		}
		out = append(out, m)
	}
}

// strings returns the values of a flattened string list.
func (p params) strings(prefix string) []string {
	ms := p.members(prefix)
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		out = append(out, p.v.Get(m))
	}
	return out
}

// tags reads a flattened list of Key/Value members.
func (p params) tags(prefix string) map[string]string {
	out := map[string]string{}
	for _, m := range p.members(prefix) {
		out[p.v.Get(m+".Key")] = p.v.Get(m + ".Value")
	}
	return out
}

// filter is one EC2 Filter: a name and the values any of which may match.
type filter struct {
	name   string
	values []string
}

func (p params) filters() []filter {
	var out []filter
	for _, m := range p.members("Filter") {
		out = append(out, filter{name: p.v.Get(m + ".Name"), values: p.strings(m + ".Value")})
	}
	return out
}

// matchValue matches EC2 filter values, where * and ? are wildcards.
func matchValue(values []string, got string) bool {
	for _, v := range values {
		if wildcard(v, got) {
			return true
		}
	}
	return false
}

func wildcard(pattern, s string) bool {
	if !strings.ContainsAny(pattern, "*?") {
		return pattern == s
	}
	if pattern == "" {
		return s == ""
	}
	switch pattern[0] {
	case '*':
		for i := 0; i <= len(s); i++ {
			if wildcard(pattern[1:], s[i:]) {
				return true
			}
		}
		return false
	case '?':
		return s != "" && wildcard(pattern[1:], s[1:])
	default:
		return s != "" && s[0] == pattern[0] && wildcard(pattern[1:], s[1:])
	}
}

// matchTags applies tag:<key> and tag-key filters; other filters pass.
func matchTags(f filter, tags map[string]string) (handled, ok bool) {
	if key, found := strings.CutPrefix(f.name, "tag:"); found {
		v, has := tags[key]
		return true, has && matchValue(f.values, v)
	}
	if f.name == "tag-key" {
		if !slices.ContainsFunc(f.values, func(v string) bool { return strings.ContainsAny(v, "*?") }) {
			// Exact keys are looked up: every instance of a fleet is filtered by them.
			return true, slices.ContainsFunc(f.values, func(v string) bool { _, has := tags[v]; return has })
		}
		for k := range tags {
			if matchValue(f.values, k) {
				return true, true
			}
		}
		return true, false
	}
	return false, false
}

// page cuts one page out of n items: MaxResults bounds it and NextToken is an
// opaque offset. It returns the range and the next token ("" on the last page).
func page(p params, n, lo, hi, def int) (from, to int, next string, err *APIError) {
	limit := p.integer("MaxResults", def)
	if p.str("MaxResults") != "" && (limit < lo || limit > hi) {
		return 0, 0, "", &APIError{"InvalidParameterValue", fmt.Sprintf("MaxResults must be between %d and %d", lo, hi)}
	}
	if tok := p.str("NextToken"); tok != "" {
		raw, decErr := base64.RawURLEncoding.DecodeString(tok)
		off, convErr := strconv.Atoi(strings.TrimPrefix(string(raw), "offset:"))
		if decErr != nil || convErr != nil || off < 0 || off > n {
			return 0, 0, "", &APIError{"InvalidNextToken", "The token '" + tok + "' is invalid"}
		}
		from = off
	}
	to = min(from+limit, n)
	if to < n {
		next = base64.RawURLEncoding.EncodeToString([]byte("offset:" + strconv.Itoa(to)))
	}
	return from, to, next, nil
}

type ec2ErrorResponse struct {
	XMLName   xml.Name `xml:"Response"`
	Errors    []ec2Err `xml:"Errors>Error"`
	RequestID string   `xml:"RequestID"`
}

type ec2Err struct {
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

func writeEC2Error(w http.ResponseWriter, status int, code, msg string) {
	writeXML(w, status, ec2ErrorResponse{Errors: []ec2Err{{code, msg}}, RequestID: "req-emulated"})
}

func writeXML(w http.ResponseWriter, status int, v any) {
	out, err := xml.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(xml.Header))
	_, _ = w.Write(out)
}
