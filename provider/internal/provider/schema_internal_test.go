package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
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
