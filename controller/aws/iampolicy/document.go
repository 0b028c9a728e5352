// Package iampolicy generates the IAM policies Stowage's AWS identities need:
// the controller's, from the actions its AWS layer calls (sdk.Permissions),
// scoped to one cluster, region, node role, set of pools and their instance
// types; and the interruption Lambda's, to its queue and its log group. It is
// pure: the same configuration always gives the same document.
package iampolicy

import (
	"encoding/json"
	"slices"
	"unicode"
)

// Version is the policy grammar's version.
const Version = "2012-10-17"

// Document is an IAM policy document.
type Document struct {
	Version   string      `json:"Version"`
	Statement []Statement `json:"Statement"`
}

// Statement is one statement; every list is written as a JSON list.
type Statement struct {
	Sid       string     `json:"Sid"`
	Effect    string     `json:"Effect"`
	Action    []string   `json:"Action"`
	Resource  []string   `json:"Resource"`
	Condition Conditions `json:"Condition,omitempty"`
}

// Conditions are a statement's Condition block: operator -> key -> values.
type Conditions map[string]map[string][]string

// with adds one key's values under an operator.
func (c Conditions) with(operator, key string, values ...string) Conditions {
	if c == nil {
		c = Conditions{}
	}
	if c[operator] == nil {
		c[operator] = map[string][]string{}
	}
	c[operator][key] = values
	return c
}

// JSON is the document as compact JSON, keys in a stable order.
func (d Document) JSON() string {
	b, err := json.Marshal(d)
	if err != nil {
		panic(err) // strings, lists and maps of strings always marshal
	}
	return string(b)
}

// Indented is the document as indented JSON, for people.
func (d Document) Indented() string {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Size is the document's size as IAM counts it against its quotas:
// characters other than white space.
func (d Document) Size() int {
	n := 0
	for _, r := range d.JSON() {
		if !unicode.IsSpace(r) {
			n++
		}
	}
	return n
}

// Actions lists every action the document allows, sorted, once each.
func (d Document) Actions() []string {
	var out []string
	for _, s := range d.Statement {
		for _, a := range s.Action {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	slices.Sort(out)
	return out
}
