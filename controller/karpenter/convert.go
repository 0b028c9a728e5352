// Package karpenter converts Karpenter v1 objects (karpenter.sh/v1 NodePool
// and NodeClaim, karpenter.k8s.aws/v1 EC2NodeClass) into Stowage's NodePool,
// NodeClaim and NodeClass, for `stowage import karpenter` and for snapshots and
// scenarios that hold Karpenter's objects. Nothing is dropped silently: a field
// with no Stowage equivalent becomes a Note (a warning naming the field, and a
// comment in the written output with its value), and an object Stowage cannot
// run as written (Windows and AL2 images, an image from an SSM parameter) is
// refused with the reason. Writers (yaml.go) render a Result; an HCL writer for
// the Terraform provider fits beside the YAML one.
package karpenter

import (
	"errors"
	"fmt"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/manifest"
)

// Karpenter's API versions this package reads.
const (
	APIVersionCore = v1alpha1.KarpenterGroup + "/v1"
	APIVersionAWS  = v1alpha1.KarpenterAWSGroup + "/v1"
)

// Kinds maps each Karpenter kind this package converts to its apiVersion and
// to the Stowage kind it becomes.
var Kinds = map[string]struct{ APIVersion, Stowage string }{
	"NodePool":     {APIVersionCore, "NodePool"},
	"NodeClaim":    {APIVersionCore, "NodeClaim"},
	"EC2NodeClass": {APIVersionAWS, "NodeClass"},
}

// Is reports whether an object is a Karpenter object this package converts.
func Is(apiVersion, kind string) bool {
	k, ok := Kinds[kind]
	return ok && k.APIVersion == apiVersion
}

// Object is one converted object: exactly one of NodePool, NodeClass and
// NodeClaim, what it was, and the notes of the conversion.
type Object struct {
	// Source is the Karpenter object as read, with its lines.
	Source    *manifest.Object
	NodePool  *v1alpha1.NodePool
	NodeClass *v1alpha1.NodeClass
	NodeClaim *v1alpha1.NodeClaim
	Notes     []Note
}

// Note is what a conversion could not carry over as written.
type Note struct {
	// Field is the Karpenter field path, e.g. spec.ipPrefixCount.
	Field string
	// Message says what happened and what to do.
	Message string
	// Value is the field's value as written, for a field that was left out,
	// so that the output keeps it as a comment; empty otherwise.
	Value string
	// Quiet notes go into the output as comments but are no warning.
	Quiet bool
	// Placeholders are the shell-style variables (${CLUSTER_NAME}) the
	// field keeps as written; the HCL writer makes each a Terraform variable.
	Placeholders []string
}

// Warnings are the notes worth a warning, each placed on its line.
func (o *Object) Warnings() []*manifest.Error {
	out := make([]*manifest.Error, 0, len(o.Notes))
	for _, n := range o.Notes {
		if !n.Quiet {
			out = append(out, o.Source.Errorf(n.Field, "%s", n.Message))
		}
	}
	return out
}

// Convert converts one Karpenter object. An error refuses the object: each
// of its errors names the field, its line and the reason.
func Convert(m *manifest.Object) (*Object, error) {
	if !Is(m.APIVersion, m.Kind) {
		return nil, m.Errorf("apiVersion", "%s %s is not a Karpenter object this converter reads (NodePool and NodeClaim of %s, EC2NodeClass of %s)",
			m.APIVersion, m.Kind, APIVersionCore, APIVersionAWS)
	}
	c := &converter{src: m, out: &Object{Source: m}}
	var err error
	switch m.Kind {
	case "NodePool":
		err = c.nodePool()
	case "EC2NodeClass":
		err = c.nodeClass()
	case "NodeClaim":
		err = c.nodeClaim()
	}
	if err != nil {
		return nil, err
	}
	if len(c.refusals) > 0 {
		return nil, errors.Join(c.refusals...)
	}
	return c.out, nil
}

// converter carries one object's conversion.
type converter struct {
	src      *manifest.Object
	out      *Object
	refusals []error
}

// decode reads the object leniently: an unknown field is a note (a newer
// Karpenter's field this converter does not know), not a failure.
func (c *converter) decode(into any) error {
	unknown, err := c.src.DecodeLenient(into)
	if err != nil {
		return err
	}
	for _, u := range unknown {
		c.note(u.Field, "", "not converted: %s; this converter knows Karpenter v1's fields, and Stowage has no equivalent for this one", u.Detail)
	}
	return nil
}

// note records a field that was changed or left out; value is its value as
// written when it was left out.
func (c *converter) note(field, value, format string, args ...any) {
	c.out.Notes = append(c.out.Notes, Note{Field: field, Message: fmt.Sprintf(format, args...), Value: value})
}

// refuse records why the object cannot be converted.
func (c *converter) refuse(field, format string, args ...any) {
	c.refusals = append(c.refusals, c.src.Errorf(field, format, args...))
}
