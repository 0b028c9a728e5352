package karpenter_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/stowage-dev/stowage/controller/karpenter"
	"github.com/stowage-dev/stowage/controller/manifest"
)

// writeHCL converts file and writes its HCL.
func writeHCL(t *testing.T, file string) (*karpenter.Result, string) {
	t.Helper()
	r, _ := importFile(t, file)
	var out bytes.Buffer
	if err := (karpenter.HCLWriter{File: file}).Write(&out, r); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return r, out.String()
}

// TestWrittenHCLHoldsEveryConvertedValue writes every file of testdata as HCL,
// parses it, and wants a resource and an import block per converted object,
// a variable per placeholder, the refusals as comments, and every value of
// each converted object among the resource's evaluated attributes (with each
// variable set to the placeholder it stands for, so that the text must come
// back exactly), or in a comment.
func TestWrittenHCLHoldsEveryConvertedValue(t *testing.T) {
	for _, file := range testdataFiles(t) {
		r, text := writeHCL(t, file)
		f, diags := hclsyntax.ParseConfig([]byte(text), file+".tf", hcl.InitialPos)
		if diags.HasErrors() {
			t.Errorf("%s: the HCL does not parse: %v\n%s", file, diags, text)
			continue
		}
		body := f.Body.(*hclsyntax.Body)
		vars := map[string]cty.Value{}
		resources := map[string]*hclsyntax.Block{}
		imports := 0
		for _, b := range body.Blocks {
			switch b.Type {
			case "variable":
				vars[b.Labels[0]] = cty.StringVal("${" + strings.ToUpper(b.Labels[0]) + "}")
			case "resource":
				resources[b.Labels[0]+"."+b.Labels[1]] = b
			case "import":
				imports++
			}
		}
		if len(resources) != len(r.Objects) || imports != len(r.Objects) {
			t.Errorf("%s: %d objects converted, %d resources and %d import blocks written", file, len(r.Objects), len(resources), imports)
		}
		for _, f := range r.Refusals {
			if !strings.Contains(text, "# Refused: "+f.Source.APIVersion+" "+f.Source.ID()) {
				t.Errorf("%s: the HCL does not record the refusal of %s", file, f.Source.ID())
			}
		}
		ctx := &hcl.EvalContext{Variables: map[string]cty.Value{"var": cty.ObjectVal(vars)}}
		for _, o := range r.Objects {
			checkValues(t, file, o, resources, ctx, text)
		}
	}
}

func checkValues(t *testing.T, file string, o *karpenter.Object, resources map[string]*hclsyntax.Block, ctx *hcl.EvalContext, text string) {
	t.Helper()
	typ, name := "stowage_node_pool", ""
	var obj any = o.NodePool
	if o.NodeClass != nil {
		typ, obj = "stowage_node_class", o.NodeClass
		name = o.NodeClass.Name
	} else {
		name = o.NodePool.Name
	}
	var block *hclsyntax.Block
	for id, b := range resources {
		if strings.HasPrefix(id, typ+".") && attrString(b.Body, "name", ctx) == name {
			block = b
		}
	}
	if block == nil {
		t.Errorf("%s: no %s named %s", file, typ, name)
		return
	}
	got := evaluated(t, block.Body, ctx)
	var js map[string]any
	if b, err := json.Marshal(obj); err != nil || json.Unmarshal(b, &js) != nil {
		t.Fatalf("marshalling %s: %v", name, err)
	}
	delete(js, "status")
	delete(js, "apiVersion")
	delete(js, "kind")
	delete(js["metadata"].(map[string]any), "creationTimestamp")
	leaves(js, "", func(path, value string) {
		if !slices.Contains(got, value) && !strings.Contains(text, value) {
			t.Errorf("%s: %s %s: %s = %q is neither an attribute's value nor in a comment", file, typ, name, path, value)
		}
	})
}

// evaluated is every attribute value of a body and its blocks, as text:
// list and map elements one by one, map keys too.
func evaluated(t *testing.T, body *hclsyntax.Body, ctx *hcl.EvalContext) []string {
	var out []string
	for _, a := range body.Attributes {
		v, diags := a.Expr.Value(ctx)
		if diags.HasErrors() {
			t.Errorf("evaluating %s: %v", a.Name, diags)
			continue
		}
		out = append(out, ctyStrings(v)...)
	}
	for _, b := range body.Blocks {
		out = append(out, evaluated(t, b.Body, ctx)...)
	}
	return out
}

func ctyStrings(v cty.Value) []string {
	switch {
	case v.Type() == cty.String:
		return []string{v.AsString()}
	case v.Type() == cty.Bool:
		return []string{fmt.Sprint(v.True())}
	case v.Type() == cty.Number:
		f := v.AsBigFloat()
		return []string{f.Text('f', -1), new(big.Float).Set(f).String()}
	case v.CanIterateElements():
		var out []string
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			if k.Type() == cty.String {
				out = append(out, k.AsString())
			}
			out = append(out, ctyStrings(e)...)
		}
		return out
	}
	return nil
}

func attrString(body *hclsyntax.Body, name string, ctx *hcl.EvalContext) string {
	a, ok := body.Attributes[name]
	if !ok {
		return ""
	}
	v, diags := a.Expr.Value(ctx)
	if diags.HasErrors() || v.Type() != cty.String {
		return ""
	}
	return v.AsString()
}

// TestHCLEscapesTemplateSequences writes values that look like Terraform
// templates and wants them back as written: user data keeps its own ${...}
// and %{...}, a tag holding ${ that is no placeholder keeps it, and a name with a dash or a leading digit becomes a valid label.
func TestHCLEscapesTemplateSequences(t *testing.T) {
	in := "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: 2nd-class}\nspec:\n" +
		"  amiSelectorTerms: [{alias: al2023@latest}]\n  role: r\n" +
		"  subnetSelectorTerms: [{tags: {k: v}}]\n  securityGroupSelectorTerms: [{tags: {k: v}}]\n" +
		"  tags: {note: \"%{if x}${1}%{endif}\"}\n" +
		"  userData: |\n    #!/bin/bash\n    echo ${HOME} %{not a directive}\n    EOT\n"
	objs, err := manifest.Read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	r := karpenter.Import(objs)
	var out bytes.Buffer
	if err := (karpenter.HCLWriter{}).Write(&out, r); err != nil {
		t.Fatal(err)
	}
	f, diags := hclsyntax.ParseConfig(out.Bytes(), "x.tf", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("%v\n%s", diags, out.String())
	}
	var res *hclsyntax.Block
	for _, b := range f.Body.(*hclsyntax.Body).Blocks {
		if b.Type == "resource" {
			res = b
		}
	}
	if res == nil || res.Labels[1] != "_2nd_class" {
		t.Fatalf("want resource stowage_node_class._2nd_class:\n%s", out.String())
	}
	ud := attrString(res.Body, "user_data", &hcl.EvalContext{})
	if ud != "#!/bin/bash\necho ${HOME} %{not a directive}\nEOT\n" {
		t.Errorf("user_data reads back as %q:\n%s", ud, out.String())
	}
	tags, diags := res.Body.Attributes["tags"].Expr.Value(nil)
	if diags.HasErrors() || tags.GetAttr("note").AsString() != "%{if x}${1}%{endif}" {
		t.Errorf("tags read back as %#v (%v)", tags, diags)
	}
}
