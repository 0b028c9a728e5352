// Command metricsref writes docs/guides/metrics.md, the reference of every
// metric `stowage run` registers (internal/metricsref), or with -check fails
// when the page is stale.
//
//	go run ./hack/metricsref docs/guides/metrics.md
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/stowage-dev/stowage/internal/metricsref"
)

func main() {
	check := flag.Bool("check", false, "fail when the page is not what this command writes")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: metricsref [-check] docs/guides/metrics.md")
		os.Exit(2)
	}
	path := flag.Arg(0)
	metrics, err := metricsref.Collect()
	if err != nil {
		fmt.Fprintf(os.Stderr, "metricsref: %v\n", err)
		os.Exit(1)
	}
	var b bytes.Buffer
	if err := metricsref.Render(&b, metrics); err != nil {
		fmt.Fprintf(os.Stderr, "metricsref: %v\n", err)
		os.Exit(1)
	}
	if *check {
		old, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(old, b.Bytes()) {
			fmt.Fprintf(os.Stderr, "metricsref: %s is stale: run `make docs` and commit\n", path)
			os.Exit(1)
		}
		return
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "metricsref: %v\n", err)
		os.Exit(1)
	}
}
