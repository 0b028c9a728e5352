package crdschema_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/stowage-dev/stowage/controller/apis/crds"
	"github.com/stowage-dev/stowage/provider/internal/crdschema"
)

func crd(t *testing.T, kind string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	for _, c := range crds.MustCRDs() {
		if c.Spec.Names.Kind == kind {
			return c
		}
	}
	t.Fatalf("no CRD for %s", kind)
	return nil
}

func build(t *testing.T, kind string) *crdschema.Node {
	t.Helper()
	spec := map[string]crdschema.Spec{"NodePool": crdschema.NodePoolSpec, "NodeClass": crdschema.NodeClassSpec}[kind]
	root, err := crdschema.Build(crd(t, kind), spec, &crdschema.Node{Name: "name", Kind: crdschema.String, JSON: []string{"metadata", "name"}})
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestEveryFieldIsMappedAndDocumented keeps the schema in step with the API
// types: every field of the CRD's spec is an attribute or block (or excluded
// with a reason), every one is documented, and a provider-side description
// exists only where the API types leave a field undocumented.
func TestEveryFieldIsMappedAndDocumented(t *testing.T) {
	for kind, spec := range map[string]crdschema.Spec{"NodePool": crdschema.NodePoolSpec, "NodeClass": crdschema.NodeClassSpec} {
		c := crd(t, kind)
		root := build(t, kind)
		mapped := map[string]bool{}
		collect(root, "", mapped)
		walkCRD(c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"], "spec", func(p string, props apiextensionsv1.JSONSchemaProps) {
			if _, ok := spec.Exclude[p]; ok || slices.Contains(spec.Flatten, p) {
				return
			}
			if !mapped[p] {
				t.Errorf("%s: field %s has no attribute or block", kind, p)
			}
			if _, ok := spec.Descriptions[p]; ok && strings.TrimSpace(props.Description) != "" {
				t.Errorf("%s: %s is documented in the API types; remove its provider-side description", kind, p)
			}
		})
		checkDocumented(t, kind, root)
	}
}

func collect(n *crdschema.Node, prefix string, out map[string]bool) {
	for _, c := range n.Children {
		if len(c.JSON) == 0 {
			continue
		}
		p := strings.Join(c.JSON, ".")
		if prefix != "" {
			p = prefix + "." + p
		}
		out[p] = true
		collect(c, p, out)
	}
}

func walkCRD(p apiextensionsv1.JSONSchemaProps, at string, fn func(string, apiextensionsv1.JSONSchemaProps)) {
	props := p.Properties
	if p.Type == "array" && p.Items != nil && p.Items.Schema != nil {
		props = p.Items.Schema.Properties
	}
	for name, child := range props {
		path := at + "." + name
		fn(path, child)
		walkCRD(child, path, fn)
	}
}

func checkDocumented(t *testing.T, kind string, n *crdschema.Node) {
	for _, c := range n.Children {
		if len(c.JSON) > 0 && c.Name != "name" && strings.TrimSpace(c.Markdown()) == "" {
			t.Errorf("%s: %s has no description", kind, c.Name)
		}
		checkDocumented(t, kind, c)
	}
}

func TestNamesAreSnakeCaseAndListBlocksSingular(t *testing.T) {
	root := build(t, "NodeClass")
	for name, want := range map[string]crdschema.Kind{
		"ami_selector_term": crdschema.ObjectList, "associate_public_ip_address": crdschema.Bool,
		"block_device_mapping": crdschema.ObjectList, "metadata_options": crdschema.Object, "kubelet": crdschema.Object,
	} {
		if c := root.Child(name); c == nil || c.Kind != want {
			t.Errorf("%s: got %+v, want kind %d", name, c, want)
		}
	}
	if c := root.Child("block_device_mapping").Child("ebs").Child("kms_key_id"); c == nil {
		t.Error("kmsKeyID is not kms_key_id")
	}
	if c := root.Child("metadata_options").Child("http_protocol_ipv6"); c == nil || c.Default != "disabled" {
		t.Errorf("httpProtocolIPv6: %+v", c)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	root := build(t, "NodePool")
	obj := map[string]any{
		"metadata": map[string]any{"name": "web"},
		"spec": map[string]any{
			"weight": int64(10),
			"limits": map[string]any{"cpu": "100"},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"a": "b"}},
				"spec": map[string]any{
					"nodeClassRef": map[string]any{"name": "default", "group": "stowage.dev", "kind": "NodeClass"},
					"requirements": []any{map[string]any{"key": "k", "operator": "In", "values": []any{"x"}, "minValues": int64(1)}},
					"expireAfter":  "720h",
				},
			},
		},
	}
	v, err := root.FromJSON(obj, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := root.ToJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := jsonString(t, d.Object), jsonString(t, obj); got != want {
		t.Fatalf("round trip:\n got %s\nwant %s", got, want)
	}
}

func TestUnknownValuesAreRecordedNotSent(t *testing.T) {
	root := build(t, "NodePool")
	typ := root.Type().(tftypes.Object)
	attrs := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		attrs[name] = tftypes.NewValue(at, nil)
	}
	attrs["name"] = tftypes.NewValue(tftypes.String, tftypes.UnknownValue)
	attrs["weight"] = tftypes.NewValue(tftypes.Number, 5)
	d, err := root.ToJSON(tftypes.NewValue(typ, attrs))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Unknown) != 1 || d.Unknown[0].String() != "metadata.name" {
		t.Fatalf("unknown = %v, want [metadata.name]", d.Unknown)
	}
	if _, ok := d.Object["metadata"]; ok {
		t.Errorf("an unknown name was sent: %v", d.Object)
	}
}

func TestAttributePaths(t *testing.T) {
	pool, class := build(t, "NodePool"), build(t, "NodeClass")
	for _, c := range []struct {
		root        *crdschema.Node
		field, want string
	}{
		{pool, "spec.template.spec.requirements[1].values[0]", "requirement[1].values[0]"},
		{pool, "spec.template.spec.requirements[0]", "requirement[0]"},
		{pool, "spec.limits[cpu]", `limits["cpu"]`},
		{pool, "spec.template.metadata.labels[example.com/team]", `labels["example.com/team"]`},
		{pool, "spec.disruption.budgets[2].schedule", "disruption.budget[2].schedule"},
		{pool, "spec.weight", "weight"},
		{pool, "metadata.name", "name"},
		{class, "spec.kubelet.evictionHard[memory.available]", `kubelet.eviction_hard["memory.available"]`},
		{class, "spec.blockDeviceMappings[0].ebs.volumeSize", "block_device_mapping[0].ebs.volume_size"},
	} {
		got, ok := c.root.AttributePath(c.field)
		if !ok || got.String() != c.want {
			t.Errorf("%s -> %s (%v), want %s", c.field, got, ok, c.want)
		}
	}
	if _, ok := pool.AttributePath("spec.template.spec"); ok {
		t.Error("a flattened wrapper mapped onto an attribute")
	}
}

func TestAdmissionRunsTheCRDRulesInProcess(t *testing.T) {
	a, err := crdschema.NewAdmission(crd(t, "NodePool"))
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{
		"apiVersion": "stowage.dev/v1alpha1", "kind": "NodePool", "metadata": map[string]any{"name": "web"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"nodeClassRef": map[string]any{"name": "default"},
			"requirements": []any{map[string]any{"key": "stowage.dev/capacity-type", "operator": "In", "values": []any{"cheap"}}},
		}}, "disruption": map[string]any{"budgets": []any{map[string]any{"nodes": "10%", "schedule": "@daily"}}}},
	}
	errs := a.Validate(context.Background(), obj)
	var fields []string
	for _, e := range errs {
		fields = append(fields, e.Field+": "+e.Detail)
	}
	joined := strings.Join(fields, "\n")
	for _, want := range []string{
		"spec.template.spec.requirements[0].values: stowage.dev/capacity-type (and karpenter.sh/capacity-type) values must be reserved, spot or on-demand",
		"spec.disruption.budgets[0]: schedule and duration go together",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("missing %q in:\n%s", want, joined)
		}
	}
	if got := obj["spec"].(map[string]any)["disruption"].(map[string]any)["consolidationPolicy"]; got != "WhenEmptyOrUnderutilized" {
		t.Errorf("defaulting did not run: consolidationPolicy = %v", got)
	}
}

func TestPruneDropsServerDefaultsTheConfigurationLeftOut(t *testing.T) {
	root := build(t, "NodePool")
	a, err := crdschema.NewAdmission(crd(t, "NodePool"))
	if err != nil {
		t.Fatal(err)
	}
	server := map[string]any{"metadata": map[string]any{"name": "web"}, "spec": map[string]any{
		"template": map[string]any{"spec": map[string]any{"nodeClassRef": map[string]any{"name": "default"}}},
	}}
	a.Default(server)
	prior := map[string]any{"metadata": map[string]any{"name": "web"}, "spec": map[string]any{
		"template": map[string]any{"spec": map[string]any{"nodeClassRef": map[string]any{"name": "default"}}},
	}}
	a.Prune(root, server, prior)
	if _, ok := server["spec"].(map[string]any)["disruption"]; ok {
		t.Errorf("the defaulted disruption block was kept: %v", server["spec"])
	}
	// A block the configuration has keeps its fields; a defaulted list inside it goes.
	server2 := map[string]any{"spec": map[string]any{"disruption": map[string]any{"consolidateAfter": "5m"}}}
	a.Default(server2)
	prior2 := map[string]any{"spec": map[string]any{"disruption": map[string]any{"consolidateAfter": "5m"}}}
	a.Prune(root, server2, prior2)
	d := server2["spec"].(map[string]any)["disruption"].(map[string]any)
	if _, ok := d["budgets"]; ok || d["consolidateAfter"] != "5m" {
		t.Errorf("disruption after prune = %v, want consolidateAfter kept and budgets dropped", d)
	}
}
