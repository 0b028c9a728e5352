package main

import (
	"strings"
	"testing"
)

// TestSecurityGuideIsCurrent fails when docs/guides/security.md does not
// show the policies the generator writes today: `make docs` rewrites them.
func TestSecurityGuideIsCurrent(t *testing.T) {
	ok, err := update("../../docs/guides/security.md", "../..", true)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Error("docs/guides/security.md is stale: run make docs and commit")
	}
}

// TestRenderShowsTheScopingConditions finds in the rendering the conditions
// the guide's prose relies on, each as the generator writes it.
func TestRenderShowsTheScopingConditions(t *testing.T) {
	md, err := Render("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"`StringEquals` `aws:RequestedRegion`: `us-east-1`",
		"`StringEquals` `aws:RequestTag/stowage.dev/nodepool`: `gpu-inference`, `web-on-demand`, `web-spot`",
		"`StringEquals` `aws:RequestTag/kubernetes.io/cluster/prod`: `owned`",
		"`ec2:InstanceType`",
		"`StringEquals` `iam:PassedToService`: `ec2.amazonaws.com`",
		"`arn:aws:iam::111122223333:role/KarpenterNodeRole-prod`",
		"`Null` `aws:ResourceTag/stowage.dev/nodepool`: `false`",
		"`StringEquals` `ec2:CreateAction`: `CreateFleet`",
		`"sqs:ReceiveMessage"`,
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the rendering has no %s", want)
		}
	}
}
