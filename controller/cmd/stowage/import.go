package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/stowage-dev/stowage/controller/karpenter"
	"github.com/stowage-dev/stowage/controller/manifest"
)

const importUsage = `usage: stowage import karpenter [--format yaml|hcl] FILE...
       stowage import cluster-autoscaler [flags] FILE...

karpenter: reads Karpenter v1 NodePools and EC2NodeClasses (YAML as kubectl get -o yaml
prints them: multi-document streams and Lists; - reads stdin) and writes Stowage NodePools
and NodeClasses to stdout: as YAML manifests, or with --format hcl as the Terraform
provider's stowage_node_pool and stowage_node_class resources with an import block each,
which adopt the objects already in the cluster without recreating them (placeholders such
as ${CLUSTER_NAME} become Terraform variables). Every field without an equivalent is a
warning on stderr and a comment in the output; an object Stowage cannot run (Windows or
AL2 images) is refused with the reason, and the exit status is 1.
`

// runImport is `stowage import karpenter FILE...`.
func runImport(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "cluster-autoscaler" {
		return runImportCAS(args[1:], stdin, stdout, stderr)
	}
	if len(args) == 0 || args[0] != "karpenter" {
		fmt.Fprint(stderr, importUsage)
		return 2
	}
	fs := flag.NewFlagSet("import karpenter", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "yaml", "output format: yaml (Stowage manifests) or hcl (Terraform resources and import blocks)")
	fs.Usage = func() { fmt.Fprint(stderr, importUsage); fs.PrintDefaults() }
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if *format != "yaml" && *format != "hcl" {
		fmt.Fprintf(stderr, "stowage import: --format %q: use yaml or hcl\n", *format)
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprint(stderr, "stowage import: name at least one file (- reads stdin)\n")
		return 2
	}
	results, err := importFiles(fs.Args(), stdin)
	if err != nil {
		fmt.Fprintf(stderr, "stowage import: %v\n", err)
		return 1
	}
	if err := writeImport(stdout, *format, fs.Args(), results); err != nil {
		fmt.Fprintf(stderr, "stowage import: %v\n", err)
		return 1
	}
	code, converted := 0, 0
	for i, r := range results {
		converted += len(r.Objects)
		if reportImport(stderr, fs.Args()[i], r, *format) {
			code = 1
		}
	}
	if converted == 0 && code == 0 {
		fmt.Fprint(stderr, "stowage import: no Karpenter NodePool or EC2NodeClass in the input\n")
		return 1
	}
	return code
}

func importFiles(files []string, stdin io.Reader) ([]*karpenter.Result, error) {
	results := make([]*karpenter.Result, 0, len(files))
	for _, file := range files {
		r, err := importFile(file, stdin)
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	return results, nil
}

// writeImport writes the results: YAML file by file, HCL as one
// configuration (one variable per placeholder, however many files use it).
func writeImport(stdout io.Writer, format string, files []string, results []*karpenter.Result) error {
	if format == "yaml" {
		for i, r := range results {
			if err := (karpenter.YAMLWriter{File: files[i]}).Write(stdout, r); err != nil {
				return err
			}
		}
		return nil
	}
	all, where := &karpenter.Result{}, map[*manifest.Object]string{}
	for i, r := range results {
		all.Objects = append(all.Objects, r.Objects...)
		all.Refusals = append(all.Refusals, r.Refusals...)
		all.Skipped = append(all.Skipped, r.Skipped...)
		for _, o := range r.Objects {
			where[o.Source] = files[i]
		}
		for _, f := range append(slices.Clone(r.Refusals), r.Skipped...) {
			where[f.Source] = files[i]
		}
	}
	return karpenter.HCLWriter{Files: where}.Write(stdout, all)
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
func reportImport(stderr io.Writer, file string, r *karpenter.Result, format string) bool {
	for _, o := range r.Objects {
		if format == "hcl" {
			printWarnings(stderr, file, karpenter.HCLWarnings(o))
			continue
		}
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
