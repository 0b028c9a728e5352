package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stowage-dev/stowage/controller/snapshotfile"
)

const upstream = "../../karpenter/testdata/upstream/"

func importCmd(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = runImport(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestImportKarpenterWritesStowageObjects(t *testing.T) {
	code, stdout, stderr := importCmd(t, "", "karpenter", upstream+"general-purpose.yaml", upstream+"docs-nodepool-gpu-isolation.yaml")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	objs, err := snapshotfile.Read(strings.NewReader(stdout))
	if err != nil {
		t.Fatalf("the output is not a Stowage snapshot: %v\n%s", err, stdout)
	}
	if len(objs.NodePools) != 2 || len(objs.NodeClasses) != 1 || objs.NodePools[0].Spec.Template.Spec.Requirements[2].Key != "stowage.dev/capacity-type" {
		t.Errorf("read %d pools and %d classes back, first pool's requirements %+v", len(objs.NodePools), len(objs.NodeClasses), objs.NodePools[0].Spec.Template.Spec.Requirements)
	}
	for _, w := range []string{
		"warning: " + upstream + "general-purpose.yaml:40: EC2NodeClass default: spec.role: keeps the placeholder ${CLUSTER_NAME}",
		"warning: " + upstream + "docs-nodepool-gpu-isolation.yaml:9: NodePool gpu: spec.template.spec.nodeClassRef: no nodeClassRef",
	} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr does not say %q:\n%s", w, stderr)
		}
	}
	for _, w := range []string{"# Converted from karpenter.sh/v1 NodePool general-purpose (" + upstream + "general-purpose.yaml:3)",
		"# spec.template.spec.nodeClassRef: no nodeClassRef"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout does not say %q", w)
		}
	}
}

func TestImportKarpenterRefusesWhatStowageCannotRun(t *testing.T) {
	code, stdout, stderr := importCmd(t, "", "karpenter", upstream+"al2-custom-ami.yaml")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	want := "refused: " + upstream + "al2-custom-ami.yaml:42: EC2NodeClass al2: spec.amiFamily: AL2: Amazon Linux 2 images are not supported"
	if !strings.Contains(stderr, want) || !strings.Contains(stdout, "# Refused: karpenter.k8s.aws/v1 EC2NodeClass al2") || !strings.Contains(stdout, "kind: NodePool") {
		t.Errorf("want the NodePool written, the EC2NodeClass refused in a comment and on stderr (%q); stdout:\n%s\nstderr:\n%s", want, stdout, stderr)
	}
}

func TestImportKarpenterReadsStdin(t *testing.T) {
	in := "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: web}\n"
	code, stdout, stderr := importCmd(t, in, "karpenter", "-")
	if code != 0 || !strings.Contains(stdout, "kind: NodePool") || !strings.Contains(stdout, "name: web") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

func TestImportRefusesBadArguments(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  string
	}{
		{"no source", "", nil, 2, "usage: stowage import karpenter"},
		{"unknown source", "", []string{"cluster-api", "x.yaml"}, 2, "usage: stowage import karpenter"},
		{"no file", "", []string{"karpenter"}, 2, "name at least one file (- reads stdin)"},
		{"unknown format", "", []string{"karpenter", "--format", "json", "x.yaml"}, 2, `--format "json": use yaml or hcl`},
		{"missing file", "", []string{"karpenter", "/nonexistent/karpenter.yaml"}, 1, "opening /nonexistent/karpenter.yaml"},
		{"syntax error", "kind: NodePool\nmetadata: [\n", []string{"karpenter", "-"}, 1, "-:2: YAML syntax"},
		{"nothing to import", "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n", []string{"karpenter", "-"}, 1, "no Karpenter NodePool or EC2NodeClass in the input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := importCmd(t, tc.stdin, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tc.code, tc.want)
			}
		})
	}
}

// TestImportKarpenterWritesHCL writes two files as one configuration: one
// variable for the placeholder both use, a resource and an import block per
// object, and warnings that name the variable.
func TestImportKarpenterWritesHCL(t *testing.T) {
	code, stdout, stderr := importCmd(t, "", "karpenter", "--format", "hcl", upstream+"general-purpose.yaml", upstream+"spot.yaml")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	for _, want := range []string{`variable "cluster_name" {`, `resource "stowage_node_pool" "general_purpose" {`, `resource "stowage_node_pool" "spot" {`,
		"to = stowage_node_pool.spot", `role = "KarpenterNodeRole-${var.cluster_name}"`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout does not hold %q:\n%s", want, stdout)
		}
	}
	if n := strings.Count(stdout, `variable "cluster_name"`); n != 1 {
		t.Errorf("%d declarations of cluster_name, want 1", n)
	}
	if !strings.Contains(stderr, "spec.role: ${CLUSTER_NAME} is var.cluster_name: set it when applying") {
		t.Errorf("stderr does not name the variable:\n%s", stderr)
	}
}
