// Command terraform-provider-stowage serves Stowage's Terraform provider.
package main

import (
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/stowage-dev/stowage/provider/internal/provider"
)

// version is set at build time (-ldflags "-X main.version=...").
var version = "dev"

func main() {
	debug := flag.Bool("debug", false, "run the provider for a debugger (prints TF_REATTACH_PROVIDERS)")
	flag.Parse()
	server, err := provider.NewServer(version)()
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
