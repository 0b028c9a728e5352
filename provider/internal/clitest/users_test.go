package clitest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// The tests of this file are issue 32's: the provider as a new user meets it,
// from the docs alone, with the real CLI. Each names its object apart, so
// that they share the package's control plane.

func pool(name, class, extra string) string {
	return fmt.Sprintf(`
resource "stowage_node_pool" "web" {
  name = %q
  node_class_ref {
    name = %q
  }
  requirement {
    key      = "stowage.dev/capacity-type"
    operator = "In"
    values   = ["spot"]
  }
%s
}
`, name, class, extra)
}

// TestCreateRefusesAnObjectItDidNotWrite: a pool made with kubectl is not
// taken over by a stowage_node_pool of the same name: the plan fails,
// naming the import block; the object is untouched; adopt_existing takes it
// over, and destroy then deletes it.
func TestCreateRefusesAnObjectItDidNotWrite(t *testing.T) {
	e := newCLIEnv(t)
	e.installCRDs(t)
	e.kubectlObject(t, "NodeClass", "nodeclasses", "taken-class", classSpec())
	e.kubectlObject(t, "NodePool", "nodepools", "taken", poolSpec("taken-class", requirement(v1alpha1.LabelCapacityType, "In", "on-demand")))
	dir := e.userDir(t, pool("taken", "taken-class", `  labels = { team = "web" }`))
	plan := e.expectFail(t, dir, []string{"Error: NodePool taken already exists", "written by kubectl-client-side-apply",
		"import {", `id = "taken"`, "terraform import stowage_node_pool.<name> taken", "adopt_existing = true"}, "plan", "-input=false")
	t.Logf("terraform plan of a pool that kubectl made:\n%s", plan)
	e.expectFail(t, dir, []string{"NodePool taken already exists"}, "apply", "-input=false", "-auto-approve")
	if got := requirementValues(e.get(t, "nodepools", "taken"), v1alpha1.LabelCapacityType); got != "[on-demand]" {
		t.Fatalf("the refused apply changed the pool: capacity types %s", got)
	}

	e.write(t, dir, pool("taken", "taken-class", "  labels = { team = \"web\" }\n  adopt_existing = true"))
	e.MustRun(t, dir, "apply", "-input=false", "-auto-approve")
	if got := requirementValues(e.get(t, "nodepools", "taken"), v1alpha1.LabelCapacityType); got != "[spot]" {
		t.Errorf("adopted pool's capacity types %s, want the configuration's [spot]", got)
	}
	e.MustRun(t, dir, "destroy", "-input=false", "-auto-approve")
	if e.exists(t, "nodepools", "taken") {
		t.Error("the adopted pool is still there after destroy")
	}
}

// TestAnApplyRemovesWhatAnotherManagerAdded: a taint added with kubectl
// patch (another field manager) shows in the plan as going, and one apply
// removes it: the next plan is empty.
func TestAnApplyRemovesWhatAnotherManagerAdded(t *testing.T) {
	e := newCLIEnv(t)
	e.installCRDs(t)
	e.kubectlObject(t, "NodeClass", "nodeclasses", "patched-class", classSpec())
	dir := e.userDir(t, pool("patched", "patched-class", ""))
	e.MustRun(t, dir, "apply", "-input=false", "-auto-approve")
	t.Cleanup(func() { _, _ = e.Run(dir, "destroy", "-input=false", "-auto-approve") })
	patch := []byte(`{"spec":{"template":{"spec":{"taints":[{"key":"example.com/oncall","value":"true","effect":"NoSchedule"}]}}}}`)
	if _, err := e.dyn.Resource(gvr("nodepools")).Patch(context.Background(), "patched", types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: "kubectl-patch"}); err != nil {
		t.Fatal(err)
	}
	plan := e.MustRun(t, dir, "plan", "-input=false")
	expectSays(t, plan, "- taint {", "Plan: 0 to add, 1 to change, 0 to destroy")
	e.MustRun(t, dir, "apply", "-input=false", "-auto-approve")
	if taints, ok, _ := unstructured.NestedSlice(e.get(t, "nodepools", "patched").Object, "spec", "template", "spec", "taints"); ok {
		t.Errorf("the taint kubectl patch added is still there after apply: %v", taints)
	}
	if again, err := e.Run(dir, "plan", "-input=false", "-detailed-exitcode"); err != nil || !strings.Contains(again, "No changes") {
		t.Fatalf("a plan after one apply is not empty (%v):\n%s", err, again)
	}
}

// TestNarrowingARequirementWarnsOfTheNodesItDrifts: narrowing
// instance-family from c6i and m6i to m6i changes no template field, but
// the controller drifts the nodes whose label the requirement no longer
// allows; the plan says how many, and which.
func TestNarrowingARequirementWarnsOfTheNodesItDrifts(t *testing.T) {
	e := newCLIEnv(t)
	e.installCRDs(t)
	e.kubectlObject(t, "NodeClass", "nodeclasses", "narrow-class", classSpec())
	family := func(values string) string {
		return fmt.Sprintf("  requirement {\n    key      = \"stowage.dev/instance-family\"\n    operator = \"In\"\n    values   = %s\n  }", values)
	}
	dir := e.userDir(t, pool("narrow", "narrow-class", family(`["c6i", "m6i"]`)))
	e.MustRun(t, dir, "apply", "-input=false", "-auto-approve")
	t.Cleanup(func() { _, _ = e.Run(dir, "destroy", "-input=false", "-auto-approve") })
	for i, f := range []string{"c6i", "c6i", "m6i"} {
		e.claim(t, fmt.Sprintf("narrow-%d", i), "narrow", "narrow-class", map[string]string{v1alpha1.LabelInstanceFamily: f})
	}
	e.write(t, dir, pool("narrow", "narrow-class", family(`["m6i"]`)))
	plan := e.MustRun(t, dir, "plan", "-input=false")
	t.Logf("terraform plan of a narrowed requirement:\n%s", plan)
	expectSays(t, plan, "Warning: This change drifts 2 nodes of pool narrow",
		"this change drifts the 2 nodes of pool narrow; they will be replaced within the pool's budgets",
		"2 nodes whose labels the new requirements no longer allow",
		"narrow-0: label stowage.dev/instance-family=c6i no longer meets nodepool narrow's requirement")
	if strings.Contains(plan, "narrow-2") {
		t.Errorf("the m6i node, which the new requirement allows, is counted:\n%s", plan)
	}
}

// TestRenamingAPoolWithNodes: the plan says a rename replaces a pool that
// has nodes; allow_destroy_with_nodes set in the same change lets the apply
// through; with create_before_destroy the new pool exists while the old
// one's nodes still drain, and the apply waits for them; without it the old
// pool goes first, and the apply creates the new one without waiting.
func TestRenamingAPoolWithNodes(t *testing.T) {
	e := newCLIEnv(t)
	e.installCRDs(t)
	e.kubectlObject(t, "NodeClass", "nodeclasses", "rename-class", classSpec())
	dir := e.userDir(t, pool("rename-old", "rename-class", ""))
	e.MustRun(t, dir, "apply", "-input=false", "-auto-approve")
	t.Cleanup(func() { _, _ = e.Run(dir, "destroy", "-input=false", "-auto-approve") })
	for i := range 2 {
		e.claim(t, fmt.Sprintf("rename-old-%d", i), "rename-old", "rename-class", nil, "example.com/draining")
	}
	e.write(t, dir, pool("rename-new", "rename-class", ""))
	plan := e.expectFail(t, dir, []string{"Renaming pool rename-old to rename-new replaces it, and it still has 2 nodes",
		"set allow_destroy_with_nodes = true in the same change", "create_before_destroy = true"}, "plan", "-input=false")
	t.Logf("terraform plan of a rename:\n%s", plan)

	e.write(t, dir, pool("rename-new", "rename-class", "  allow_destroy_with_nodes = true\n  lifecycle {\n    create_before_destroy = true\n  }"))
	done := make(chan struct{})
	var out string
	var err error
	go func() {
		defer close(done)
		out, err = e.Run(dir, "apply", "-input=false", "-auto-approve")
	}()
	// The old pool's claims are deleted and held by their finalizer (a
	// drain): the new pool exists meanwhile, and the apply has not returned.
	e.eventually(t, func() error {
		select {
		case <-done:
			t.Fatalf("the apply returned while the old pool's nodes drain (%v):\n%s", err, out)
		default:
		}
		if !e.exists(t, "nodepools", "rename-new") {
			return fmt.Errorf("pool rename-new does not exist yet")
		}
		if e.exists(t, "nodepools", "rename-old") {
			return fmt.Errorf("pool rename-old is not deleted yet")
		}
		if c := e.get(t, "nodeclaims", "rename-old-0"); c.GetDeletionTimestamp() == nil {
			return fmt.Errorf("the old pool's claims are not being deleted")
		}
		return nil
	})
	for i := range 2 {
		e.release(t, fmt.Sprintf("rename-old-%d", i))
	}
	<-done
	if err != nil {
		t.Fatalf("the rename's apply failed: %v\n%s", err, out)
	}
	expectSays(t, out, "Apply complete! Resources: 1 added, 0 changed, 1 destroyed.")

	// Without create_before_destroy the old pool goes first; the apply
	// creates its successor without waiting for the old nodes to drain.
	e.claim(t, "rename-new-0", "rename-new", "rename-class", nil, "example.com/draining")
	e.write(t, dir, pool("rename-third", "rename-class", "  allow_destroy_with_nodes = true"))
	out = e.MustRun(t, dir, "apply", "-input=false", "-auto-approve")
	expectSays(t, out, "Apply complete! Resources: 1 added, 0 changed, 1 destroyed.")
	if !e.exists(t, "nodepools", "rename-third") || e.get(t, "nodeclaims", "rename-new-0").GetDeletionTimestamp() == nil {
		t.Errorf("after the rename without create_before_destroy: rename-third exists %v; the old pool's claim must be draining",
			e.exists(t, "nodepools", "rename-third"))
	}
}

// TestANodeClassRefToNothing: the plan fails on a node_class_ref that names
// a class neither the configuration nor the cluster has. When the cluster
// cannot be reached at plan time (its kubeconfig is known only at apply),
// the plan warns, and the apply fails.
func TestANodeClassRefToNothing(t *testing.T) {
	e := newCLIEnv(t)
	e.installCRDs(t)
	dir := e.userDir(t, pool("orphan", "nowhere", ""))
	plan := e.expectFail(t, dir, []string{"Error: NodeClass nowhere does not exist", "neither this configuration nor the cluster has a NodeClass named nowhere",
		"node_class_ref { name = stowage_node_class.<name>.name }"}, "plan", "-input=false")
	t.Logf("terraform plan of a pool naming no class:\n%s", plan)

	unreachable := e.userDir(t, fmt.Sprintf(`
resource "terraform_data" "kubeconfig" {
  input = %q
}
provider "stowage" {
  kubeconfig_path = terraform_data.kubeconfig.output
}
`, e.cp.KubeconfigPath)+pool("orphan", "nowhere", ""))
	plan = e.MustRun(t, unreachable, "plan", "-input=false")
	expectSays(t, plan, "Warning: Could not check that NodeClass nowhere exists", "the cluster cannot be reached at plan time")
	e.expectFail(t, unreachable, []string{"NodeClass nowhere does not exist"}, "apply", "-input=false", "-auto-approve")
	if e.exists(t, "nodepools", "orphan") {
		t.Error("the apply wrote pool orphan, whose class exists nowhere")
	}
}

// TestDestroyWaitsForTheNodesToDrain: the pool's destroy returns once its
// nodes are gone, and the NodeClass is deleted only then.
func TestDestroyWaitsForTheNodesToDrain(t *testing.T) {
	e := newCLIEnv(t)
	e.installCRDs(t)
	dir := e.userDir(t, classResource("c", "drain-class")+pool("drain", "${stowage_node_class.c.name}", "  allow_destroy_with_nodes = true"))
	e.MustRun(t, dir, "apply", "-input=false", "-auto-approve")
	e.claim(t, "drain-0", "drain", "drain-class", nil, "example.com/draining")
	done := make(chan struct{})
	var out string
	var err error
	go func() {
		defer close(done)
		out, err = e.Run(dir, "destroy", "-input=false", "-auto-approve")
	}()
	e.eventually(t, func() error {
		select {
		case <-done:
			t.Fatalf("destroy returned while the pool's node drains (%v):\n%s", err, out)
		default:
		}
		if e.exists(t, "nodepools", "drain") || e.get(t, "nodeclaims", "drain-0").GetDeletionTimestamp() == nil {
			return fmt.Errorf("the pool is not deleted, or its claim is not being deleted, yet")
		}
		if !e.exists(t, "nodeclasses", "drain-class") {
			t.Fatal("the NodeClass was deleted while a node launched with it drains")
		}
		return nil
	})
	e.release(t, "drain-0")
	<-done
	if err != nil {
		t.Fatalf("destroy: %v\n%s", err, out)
	}
	if e.exists(t, "nodeclasses", "drain-class") {
		t.Error("the NodeClass is still there after destroy")
	}
}

// requirementValues prints the values of a pool's requirement on key.
func requirementValues(u *unstructured.Unstructured, key string) string {
	reqs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "requirements")
	for _, r := range reqs {
		m, _ := r.(map[string]any)
		if m["key"] == key {
			return fmt.Sprint(m["values"])
		}
	}
	return ""
}
