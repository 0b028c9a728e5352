package karpenter

import (
	"io"
	"strings"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"

	"github.com/stowage-dev/stowage/controller/manifest"
)

// Result is the conversion of a set of files: what was converted, what was
// refused and why, and what was skipped.
type Result struct {
	Objects  []*Object
	Refusals []Refusal
	// Skipped are objects an import leaves alone (NodeClaims, other kinds), each
	// with the reason.
	Skipped []Refusal
}

// Refusal is an object that was not converted and why.
type Refusal struct {
	Source *manifest.Object
	Err    error
}

// Writer renders a Result in one output format: YAML manifests (YAMLWriter)
// today, the Terraform provider's HCL beside it.
type Writer interface {
	Write(w io.Writer, r *Result) error
}

// Import converts the NodePools and EC2NodeClasses of objs, in order, for
// `stowage import karpenter`; every other object is skipped with the reason.
func Import(objs []*manifest.Object) *Result {
	r := &Result{}
	for _, m := range objs {
		switch {
		case Is(m.APIVersion, m.Kind) && m.Kind == "NodeClaim":
			r.Skipped = append(r.Skipped, Refusal{m, m.Errorf("kind", "a NodeClaim is a node Karpenter launched, not configuration: not imported (stowage schedule reads it as capacity)")})
		case m.Kind == "NodeOverlay" && strings.HasPrefix(m.APIVersion, v1alpha1.KarpenterGroup+"/"):
			r.Skipped = append(r.Skipped, Refusal{m, m.Errorf("kind", "Stowage has no NodeOverlay (price and capacity overrides per instance type): not imported; Stowage prices offerings from the AWS Pricing API and spot history")})
		case !Is(m.APIVersion, m.Kind):
			r.Skipped = append(r.Skipped, Refusal{m, m.Errorf("kind", "%s %s is not a Karpenter NodePool or EC2NodeClass: not imported", m.APIVersion, m.Kind)})
		default:
			o, err := Convert(m)
			if err != nil {
				r.Refusals = append(r.Refusals, Refusal{m, err})
				continue
			}
			r.Objects = append(r.Objects, o)
		}
	}
	return r
}
