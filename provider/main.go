// Command terraform-provider-stowage serves Stowage's Terraform provider.
package main

import (
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

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
	server, err := provider.NewReleaseServer(version, imageDigest)()
	if err != nil {
		log.Fatal(err)
	}
	var opts []tf6server.ServeOpt
	if *debug {
		opts = append(opts, tf6server.WithManagedDebug())
	}
	if err := tf6server.Serve(provider.Address, func() tfprotov6.ProviderServer { return server }, opts...); err != nil {
		log.Fatal(err)
	}
}
