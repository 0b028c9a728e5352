package main

import (
	"fmt"
	"io"
	"runtime"

	"github.com/stowage-dev/stowage/controller/buildinfo"
)

// runVersion is `stowage version`: the version and commit make build or
// make release stamped, "unknown" for a plain go build, and the Go
// toolchain and platform.
func runVersion(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "stowage version: takes no arguments, got %q\n", args)
		return 2
	}
	fmt.Fprintf(stdout, "version: %s\ncommit: %s\ngo: %s %s/%s\n",
		buildinfo.Version(), buildinfo.Commit(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return 0
}
