// Command zipbootstrap writes a built bootstrap into a reproducible Lambda
// zip: zipbootstrap -o OUT.zip BOOTSTRAP. make lambda runs it.
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
	flag.Parse()
	if *out == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: zipbootstrap -o OUT.zip BOOTSTRAP")
		os.Exit(2)
	}
	if err := run(*out, flag.Arg(0)); err != nil {
		fmt.Fprintln(os.Stderr, "zipbootstrap:", err)
		os.Exit(1)
	}
}

func run(out, bootstrap string) error {
	bin, err := os.ReadFile(bootstrap)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := bundle.Write(&buf, bin); err != nil {
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644) //nolint:gosec // a build artefact, readable by all
}
