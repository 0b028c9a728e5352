package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// TestOnlyTheNameForcesReplacement walks every attribute of both resources:
// a pool or class is updated in place for everything but its name, since
// replacing a pool replaces its nodes.
func TestOnlyTheNameForcesReplacement(t *testing.T) {
	ctx := context.Background()
	for _, newResource := range []func() resource.Resource{newNodePoolResource, newNodeClassResource} {
		var resp resource.SchemaResponse
		newResource().Schema(ctx, resource.SchemaRequest{}, &resp)
		if resp.Diagnostics.HasError() {
			t.Fatal(resp.Diagnostics)
		}
		var replacing []string
		for name, a := range resp.Schema.Attributes {
			if s, ok := a.(schema.StringAttribute); ok {
				for _, m := range s.PlanModifiers {
					if strings.Contains(m.Description(ctx), "destroy and recreate") {
						replacing = append(replacing, name)
					}
				}
			}
			if a.GetMarkdownDescription() == "" {
				t.Errorf("%s has no description", name)
			}
		}
		if len(replacing) != 1 || replacing[0] != "name" {
			t.Errorf("attributes forcing replacement: %v, want only name", replacing)
		}
		for name, b := range resp.Schema.Blocks {
			if b.GetMarkdownDescription() == "" {
				t.Errorf("block %s has no description", name)
			}
		}
	}
}

// TestTheSchemaTerraformReadsRequiresTheRequiredBlocks reads the schema
// through the protocol server, as Terraform and tfplugindocs do: the blocks
// the CRDs require have MinItems 1 (MaxItems 1 for a single block), the
// others none; and a range the CRD bounds is in the description.
func TestTheSchemaTerraformReadsRequiresTheRequiredBlocks(t *testing.T) {
	s, err := NewServer("test")()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string][2]int64{
		"stowage_node_pool":  {"node_class_ref": {1, 1}, "requirement": {0, 0}, "disruption": {0, 0}},
		"stowage_node_class": {"ami_selector_term": {1, 0}, "subnet_selector_term": {1, 0}, "security_group_selector_term": {1, 0}, "kubelet": {0, 0}},
	}
	for typ, blocks := range want {
		rs := resp.ResourceSchemas[typ]
		if rs == nil {
			t.Fatalf("no schema for %s", typ)
		}
		for name, minMax := range blocks {
			found := false
			for _, b := range rs.Block.BlockTypes {
				if b.TypeName == name {
					found = true
					if b.MinItems != minMax[0] || b.MaxItems != minMax[1] {
						t.Errorf("%s.%s: MinItems %d MaxItems %d, want %v", typ, name, b.MinItems, b.MaxItems, minMax)
					}
				}
			}
			if !found {
				t.Errorf("%s has no block %s", typ, name)
			}
		}
	}
	for _, a := range resp.ResourceSchemas["stowage_node_pool"].Block.Attributes {
		if a.Name == "weight" && !strings.Contains(a.Description, "From 1 to 100.") {
			t.Errorf("weight's description does not give its range: %q", a.Description)
		}
	}
}
