package provider_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

func classWith(provider, name string) string {
	return provider + classConfig(name, "")
}

// TestAccProviderAccessModes applies a node class through each way the
// provider reaches a cluster: a host with a CA and a token, and an EKS
// cluster whose endpoint and CA come from eks:DescribeCluster (the emulator)
// and whose token is minted by internal/ekstoken and verified by the bed's
// token webhook, which replays it against the emulator's STS to learn the
// IAM identity that signed it (the acceptance tests' user, mapped to an
// administrator). A token signed for another cluster is refused. Bad
// settings fail naming the attribute and the fix.
func TestAccProviderAccessModes(t *testing.T) {
	hostBlock := fmt.Sprintf(`
provider "stowage" {
  host                   = %q
  cluster_ca_certificate = %q
  token                  = %q
}
`, bed.cp.APIServerURL, string(bed.cp.Config.CAData), staticToken)
	eks := func(cluster string) string {
		return fmt.Sprintf(`
provider "stowage" {
  eks_cluster_name = %q
  aws_region       = "us-east-1"
  aws_endpoint_url = %q
}
`, cluster, access.sts.URL)
	}
	eksBlock := eks(eksCluster)
	before := access.emu.Calls("GetCallerIdentity")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		CheckDestroy: resource.ComposeTestCheckFunc(checkGone("nodeclasses", "acc-eks"),
			checkGone("nodeclasses", "acc-host")), // renaming replaced it
		Steps: []resource.TestStep{
			{Config: classWith(hostBlock, "acc-host"), Check: checkServer("nodeclasses", "acc-host", map[string]string{"spec.role": "StowageNodeRole-acc"})},
			{Config: classWith(eksBlock, "acc-eks"), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(classAddr, plancheck.ResourceActionReplace),
			}}, Check: resource.ComposeTestCheckFunc(
				checkServer("nodeclasses", "acc-eks", map[string]string{"spec.role": "StowageNodeRole-acc"}),
				func(*terraform.State) error {
					if access.emu.Calls("GetCallerIdentity") == before {
						return fmt.Errorf("the token webhook verified no EKS token with STS: the provider did not authenticate as EKS")
					}
					return nil
				})},
			// The same credentials, but the token names another cluster: its
			// signature does not cover this one's id, and STS refuses the replay.
			{Config: classWith(eks(eksOther), "acc-eks"), PlanOnly: true, ExpectError: regexp.MustCompile(`(?i)unauthorized`)},
			{Config: classWith(`provider "stowage" {
  host = "https://127.0.0.1:1"
}`, "acc-nohost"), ExpectError: inOrder("host is set without credentials: set token, or client_certificate and client_key, or eks_cluster_name")},
			{Config: classWith(fmt.Sprintf(`provider "stowage" {
  eks_cluster_name = "no-such-cluster"
  aws_region       = "us-east-1"
  aws_endpoint_url = %q
}`, access.emulator.URL), "acc-nocluster"), ExpectError: inOrder("describing EKS cluster no-such-cluster (eks_cluster_name)", "ResourceNotFoundException")},
			{Config: classWith(`provider "stowage" {
  kubeconfig_path = "/nonexistent/kubeconfig"
}`, "acc-nokubeconfig"), ExpectError: regexp.MustCompile(`kubeconfig_path /nonexistent/kubeconfig`)},
			// Back to a working provider, so that the test's destroy reaches the cluster.
			{Config: classWith(eksBlock, "acc-eks"), PlanOnly: true},
		},
	})
}
