package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/stowage-dev/stowage/provider/internal/crdschema"
)

// NewServer returns the factory of the provider's protocol server: the
// framework's, with the blocks the CRDs require marked required in the
// schema Terraform reads (MinItems), which the framework leaves to
// validators. Terraform then refuses a configuration without them itself,
// and the generated reference lists them under Required.
func NewServer(version string) func() (tfprotov6.ProviderServer, error) {
	return NewReleaseServer(version, "")
}

// NewReleaseServer is NewServer for a release whose controller image is the
// index of imageDigest (sha256:...), as make release stamps it.
func NewReleaseServer(version, imageDigest string) func() (tfprotov6.ProviderServer, error) {
	return func() (tfprotov6.ProviderServer, error) {
		s, err := providerserver.NewProtocol6WithError(NewRelease(version, imageDigest)())()
		if err != nil {
			return nil, err
		}
		return requiredBlocks{s}, nil
	}
}

type requiredBlocks struct{ tfprotov6.ProviderServer }

func (s requiredBlocks) GetProviderSchema(ctx context.Context, req *tfprotov6.GetProviderSchemaRequest) (*tfprotov6.GetProviderSchemaResponse, error) {
	resp, err := s.ProviderServer.GetProviderSchema(ctx, req)
	if err != nil || resp == nil {
		return resp, err
	}
	for _, k := range []*kind{nodePoolKind, nodeClassKind} {
		root, _, err := k.load()
		if err != nil {
			continue // the framework's schema already carries the error
		}
		if rs := resp.ResourceSchemas["stowage_"+k.typeName]; rs != nil && rs.Block != nil {
			markRequired(root, rs.Block)
		}
	}
	return resp, nil
}

// markRequired sets MinItems on the blocks of b that the node's children
// require (and MaxItems on a single block, as the protocol wants it).
func markRequired(n *crdschema.Node, b *tfprotov6.SchemaBlock) {
	for _, c := range n.Children {
		if !c.Required || (c.Kind != crdschema.Object && c.Kind != crdschema.ObjectList) {
			continue
		}
		for _, nb := range b.BlockTypes {
			if nb.TypeName != c.Name {
				continue
			}
			nb.MinItems = 1
			if nb.Nesting == tfprotov6.SchemaNestedBlockNestingModeSingle {
				nb.MaxItems = 1
			}
		}
	}
}
