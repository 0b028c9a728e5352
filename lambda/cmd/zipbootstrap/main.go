// Command zipbootstrap writes a built bootstrap into a reproducible Lambda
// zip: zipbootstrap -o OUT.zip BOOTSTRAP. make lambda runs it; make release
// also zips the Terraform provider with it, under the name the Registry
// expects (-entry terraform-provider-stowage_v1.2.3).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/stowage-dev/stowage/lambda/bundle"
)

func main() {
	out := flag.String("o", "", "the zip to write")
	entry := flag.String("entry", bundle.Entry, "the name of the executable in the zip")
	flag.Parse()
	if *out == "" || *entry == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: zipbootstrap -o OUT.zip [-entry NAME] BOOTSTRAP")
		os.Exit(2)
	}
	if err := run(*out, *entry, flag.Arg(0)); err != nil {
		fmt.Fprintln(os.Stderr, "zipbootstrap:", err)
		os.Exit(1)
	}
}

func run(out, entry, bootstrap string) error {
	bin, err := os.ReadFile(bootstrap)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := bundle.WriteEntry(&buf, entry, bin); err != nil {
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644) //nolint:gosec // a build artefact, readable by all
}
