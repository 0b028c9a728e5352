package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/stowage-dev/stowage/controller/karpenter"
	"github.com/stowage-dev/stowage/controller/manifest"
)

const importUsage = `usage: stowage import karpenter [--format yaml] FILE...

Reads Karpenter v1 NodePools and EC2NodeClasses (YAML as kubectl get -o yaml prints
them: multi-document streams and Lists; - reads stdin) and writes Stowage NodePools
and NodeClasses to stdout. Every field without an equivalent is a warning on stderr
and a comment in the output; an object Stowage cannot run (Windows or AL2 images) is
refused with the reason, and the exit status is 1.
`

// runImport is `stowage import karpenter FILE...`.
func runImport(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "karpenter" {
		fmt.Fprint(stderr, importUsage)
		return 2
	}
	fs := flag.NewFlagSet("import karpenter", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "yaml", "output format: yaml (Terraform HCL comes with the provider's modules)")
	fs.Usage = func() { fmt.Fprint(stderr, importUsage); fs.PrintDefaults() }
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if *format != "yaml" {
		fmt.Fprintf(stderr, "stowage import: --format %q: the only format is yaml\n", *format)
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprint(stderr, "stowage import: name at least one file (- reads stdin)\n")
		return 2
	}
	code, converted := 0, 0
	for _, file := range fs.Args() {
		r, err := importFile(file, stdin)
		if err != nil {
			fmt.Fprintf(stderr, "stowage import: %v\n", err)
			return 1
		}
		if err := (karpenter.YAMLWriter{File: file}).Write(stdout, r); err != nil {
			fmt.Fprintf(stderr, "stowage import: %v\n", err)
			return 1
		}
		converted += len(r.Objects)
		if reportImport(stderr, file, r) {
			code = 1
		}
	}
	if converted == 0 && code == 0 {
		fmt.Fprint(stderr, "stowage import: no Karpenter NodePool or EC2NodeClass in the input\n")
		return 1
	}
	return code
}

// importFile reads and converts one file.
func importFile(file string, stdin io.Reader) (*karpenter.Result, error) {
	in := stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("opening %s: %w", file, err)
		}
		defer f.Close()
		in = f
	}
	objs, err := manifest.Read(in)
	if err != nil {
		return nil, fileError(file, err)
	}
	return karpenter.Import(objs), nil
}

// reportImport prints the warnings, skips and refusals on stderr, each on its
// line of the file; it reports whether anything was refused.
func reportImport(stderr io.Writer, file string, r *karpenter.Result) bool {
	for _, o := range r.Objects {
		printWarnings(stderr, file, o.Warnings())
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(stderr, "skipped: %v\n", manifest.InFile(file, s.Err))
	}
	for _, f := range r.Refusals {
		for _, e := range manifest.Leaves(manifest.InFile(file, f.Err)) {
			fmt.Fprintf(stderr, "refused: %v\n", e)
		}
	}
	return len(r.Refusals) > 0
}

// printWarnings prints conversion warnings on stderr, each on its line of file.
func printWarnings(stderr io.Writer, file string, warnings []*manifest.Error) {
	for _, w := range warnings {
		fmt.Fprintf(stderr, "warning: %v\n", manifest.InFile(file, w))
	}
}
