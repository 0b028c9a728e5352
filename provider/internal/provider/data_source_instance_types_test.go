package provider_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

const gpuTypes = `
data "stowage_instance_types" "gpu" {
  requirement {
    key      = "stowage.dev/instance-family"
    operator = "In"
    values   = ["g5", "g6"]
  }
  requirement {
    key      = "stowage.dev/instance-gpu-count"
    operator = "Gte"
    values   = ["4"]
  }
  requirement {
    key      = "stowage.dev/capacity-type"
    operator = "In"
    values   = ["on-demand"]
  }
}
`

// TestInstanceTypes lists the 4-GPU g5/g6 types on demand from the built-in
// catalogue, cheapest first; the live catalogue through the AWS layer and the
// emulator; and rejects a bad requirement naming it.
func TestInstanceTypes(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		Steps: []resource.TestStep{
			{Config: gpuTypes, Check: func(s *terraform.State) error {
				a := s.RootModule().Resources["data.stowage_instance_types.gpu"].Primary.Attributes
				n, _ := strconv.Atoi(a["instance_types.#"])
				if n < 2 {
					return fmt.Errorf("%d types, want the g5 and g6 types with 4 or more GPUs", n)
				}
				last := 0.0
				for i := range n {
					p := fmt.Sprintf("instance_types.%d.", i)
					gpus, _ := strconv.Atoi(a[p+"gpu_count"])
					price, _ := strconv.ParseFloat(a[p+"cheapest_price"], 64)
					if gpus < 4 || (a[p+"family"] != "g5" && a[p+"family"] != "g6") || a[p+"capacity_types.0"] != "on-demand" {
						return fmt.Errorf("%s (%s, %d GPUs, %s) does not meet the requirements", a[p+"name"], a[p+"family"], gpus, a[p+"capacity_types.0"])
					}
					if price < last || price != mustFloat(a[p+"on_demand_price"]) {
						return fmt.Errorf("%s at %.4f is out of price order (previous %.4f) or not its on-demand price", a[p+"name"], price, last)
					}
					last = price
				}
				return nil
			}},
			{Config: fmt.Sprintf(`
provider "stowage" {
  aws_region       = "us-east-1"
  aws_endpoint_url = %q
}
data "stowage_instance_types" "live" {
  catalogue = "aws"
  zones     = ["us-east-1a", "us-east-1b"]
  requirement {
    key      = "stowage.dev/instance-gpu-count"
    operator = "Gte"
    values   = ["4"]
  }
}`, access.emulator.URL), Check: resource.ComposeTestCheckFunc(
				// The emulator's catalogue has one type with 4 GPUs, priced by its Pricing API.
				resource.TestCheckResourceAttr("data.stowage_instance_types.live", "instance_types.#", "1"),
				resource.TestCheckResourceAttr("data.stowage_instance_types.live", "instance_types.0.name", "g5.12xlarge"),
				resource.TestCheckResourceAttr("data.stowage_instance_types.live", "instance_types.0.on_demand_price", "5.672"),
				resource.TestCheckResourceAttr("data.stowage_instance_types.live", "instance_types.0.zones.#", "2"),
			)},
			{Config: `
data "stowage_instance_types" "bad" {
  requirement {
    key      = "stowage.dev/capacity-type"
    operator = "In"
    values   = ["cheap"]
  }
}`, ExpectError: inOrder(`Invalid requirement[0].values[0]`, `Unsupported value: "cheap"`)},
		},
	})
}

func mustFloat(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// TestInstanceTypesWithoutCredentials reads the live catalogue with no AWS
// credentials anywhere: the error names the calls, the credentials and the
// ways to give them, and the built-in catalogue, rather than the SDK's
// credential chain.
func TestInstanceTypesWithoutCredentials(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		Steps: []resource.TestStep{{Config: fmt.Sprintf(`
provider "stowage" {
  aws_region       = "us-east-1"
  aws_endpoint_url = %q
}
data "stowage_instance_types" "live" {
  catalogue = "aws"
  zones     = ["us-east-1a"]
}`, access.emulator.URL), ExpectError: inOrder(`catalogue "aws" calls ec2:DescribeInstanceTypes`,
			"set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or aws_profile", `use catalogue = "builtin"`)}},
	})
}
