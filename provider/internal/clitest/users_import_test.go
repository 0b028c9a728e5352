package clitest

import (
	"context"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

// TestAnImportPlansNoChange imports, with an import block as the migration
// guide does, a pool written by another tool in other spellings (720h0m0s,
// 1k) and with its defaulted disruption block written out: the first plan
// imports and changes nothing, and the object keeps its spellings.
func TestAnImportPlansNoChange(t *testing.T) {
	e := newCLIEnv(t)
	e.installCRDs(t)
	e.kubectlObject(t, "NodeClass", "nodeclasses", "imported-class", classSpec())
	spec := poolSpec("imported-class", requirement(v1alpha1.LabelCapacityType, "In", "spot"))
	spec["limits"] = map[string]any{"cpu": "1k", "memory": "4000Gi"}
	spec["disruption"] = map[string]any{"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "0s",
		"budgets": []any{map[string]any{"nodes": "10%"}}}
	tmpl := spec["template"].(map[string]any)["spec"].(map[string]any)
	tmpl["expireAfter"] = "720h0m0s"
	tmpl["terminationGracePeriod"] = "48h0m0s"
	e.kubectlObject(t, "NodePool", "nodepools", "imported", spec)
	dir := e.userDir(t, `
import {
  to = stowage_node_pool.imported
  id = "imported"
}

resource "stowage_node_pool" "imported" {
  name                     = "imported"
  expire_after             = "720h"
  termination_grace_period = "48h"
  limits                   = { cpu = "1000", memory = "4000Gi" }
  node_class_ref {
    name = "imported-class"
  }
  requirement {
    key      = "stowage.dev/capacity-type"
    operator = "In"
    values   = ["spot"]
  }
  disruption {
    consolidation_policy = "WhenEmptyOrUnderutilized"
    consolidate_after    = "0s"
    budget {
      nodes = "10%"
    }
  }
}
`)
	plan := e.MustRun(t, dir, "plan", "-input=false")
	t.Logf("the first plan after the import:\n%s", plan)
	expectSays(t, plan, "Plan: 1 to import, 0 to add, 0 to change, 0 to destroy.")
	e.MustRun(t, dir, "apply", "-input=false", "-auto-approve")
	if again := e.MustRun(t, dir, "plan", "-input=false"); !regexp.MustCompile(`No changes`).MatchString(again) {
		t.Errorf("a plan after the import's apply is not empty:\n%s", again)
	}
	u := e.get(t, "nodepools", "imported")
	if got, _, _ := unstructuredString(u.Object, "spec", "template", "spec", "expireAfter"); got != "720h0m0s" {
		t.Errorf("expireAfter rewritten to %q by an import that changes nothing", got)
	}
	e.MustRun(t, dir, "destroy", "-input=false", "-auto-approve")
}

// TestASelectorChangeWarnsOfTheNodesOutsideIt: a class's image selector
// moved to other images drifts the nodes launched from the old ones, which
// the plan resolves through the provider's AWS access (the emulator) and
// counts; without credentials it says it could not resolve.
func TestASelectorChangeWarnsOfTheNodesOutsideIt(t *testing.T) {
	e := newCLIEnv(t)
	e.installCRDs(t)
	emu := awsemu.New(awsemu.DefaultConfig())
	srv := httptest.NewServer(emu.Handler())
	t.Cleanup(srv.Close)
	old := emu.AddImage(awsemu.Image{Name: "nodes-old", Architecture: "x86_64", OwnerID: "123456789012", Tags: map[string]string{"release": "old"}})
	emu.AddImage(awsemu.Image{Name: "nodes-new", Architecture: "x86_64", OwnerID: "123456789012", Tags: map[string]string{"release": "new"}})
	emu.AddSubnet(awsemu.Subnet{Zone: "us-east-1a", CIDR: "10.0.0.0/24", AvailableIPs: 100, Tags: map[string]string{"net": "resolve"}})
	emu.AddSecurityGroup(awsemu.SecurityGroup{Name: "nodes", Tags: map[string]string{"net": "resolve"}})
	class := func(release string) string {
		return `
provider "stowage" {
  aws_region       = "us-east-1"
  aws_endpoint_url = "` + srv.URL + `"
}
resource "stowage_node_class" "c" {
  name       = "resolve-class"
  role       = "StowageNodeRole-users"
  ami_family = "AL2023"
  ami_selector_term {
    tags = { release = "` + release + `" }
  }
  subnet_selector_term {
    tags = { net = "resolve" }
  }
  security_group_selector_term {
    tags = { net = "resolve" }
  }
}
` + pool("resolve", "${stowage_node_class.c.name}", "")
	}
	dir := e.userDir(t, class("old"))
	e.MustRun(t, dir, "apply", "-input=false", "-auto-approve")
	t.Cleanup(func() { _, _ = e.Run(dir, "destroy", "-input=false", "-auto-approve") })
	for _, name := range []string{"resolve-0", "resolve-1"} {
		e.claim(t, name, "resolve", "resolve-class", nil)
		c := e.get(t, "nodeclaims", name)
		c.Object["status"] = map[string]any{"imageID": old}
		if _, err := e.dyn.Resource(gvr("nodeclaims")).UpdateStatus(context.Background(), c, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	e.write(t, dir, class("new"))
	withAWS := *e.CLI
	withAWS.Env = append(slices.Clone(e.CLI.Env), "AWS_ACCESS_KEY_ID="+awsemu.DefaultAccessKeyID, "AWS_SECRET_ACCESS_KEY="+awsemu.DefaultSecretAccessKey,
		"AWS_CONFIG_FILE="+os.DevNull, "AWS_SHARED_CREDENTIALS_FILE="+os.DevNull, "AWS_EC2_METADATA_DISABLED=true")
	plan := withAWS.MustRun(t, dir, "plan", "-input=false")
	t.Logf("terraform plan of a class whose image selector moves:\n%s", plan)
	expectSays(t, plan, "Warning: This change drifts 2 nodes of node class resolve-class", "2 nodes whose image the new selectors no longer select")

	noAWS := *e.CLI
	noAWS.Env = append(slices.Clone(e.CLI.Env), "AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY=", "AWS_CONFIG_FILE="+os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE="+os.DevNull, "AWS_EC2_METADATA_DISABLED=true")
	plan = noAWS.MustRun(t, dir, "plan", "-input=false")
	expectSays(t, plan, "Warning: This change may drift the nodes of node class resolve-class", "the provider could not resolve them")
}
