// Command terraform-provider-stowage serves Stowage's Terraform provider.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/stowage-dev/stowage/provider/internal/provider"
)

// version and imageDigest are set at build time by make release
// (-ldflags "-X main.version=1.2.3 -X main.imageDigest=sha256:..."): the
// digest is the controller image's index, built first, which
// stowage_controller deploys by default.
var (
	version     = "dev"
	imageDigest = ""
)

func main() {
	debug := flag.Bool("debug", false, "run the provider for a debugger (prints TF_REATTACH_PROVIDERS)")
	flag.Parse()
	err := providerserver.Serve(context.Background(), provider.NewRelease(version, imageDigest), providerserver.ServeOpts{Address: provider.Address, Debug: *debug})
	if err != nil {
		log.Fatal(err)
	}
}
