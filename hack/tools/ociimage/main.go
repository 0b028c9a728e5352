// Command ociimage writes Stowage's controller image as an OCI image layout
// (oci-layout, index.json, blobs/), one image per platform under one index,
// with go-containerregistry and without a container daemon:
//
//	ociimage -out DIR -binary linux/amd64=PATH [-binary linux/arm64=PATH] \
//	    -zoneinfo $(go env GOROOT)/lib/time/zoneinfo.zip -version v1.2.3 -commit SHA -created UNIX-SECONDS
//
// Each image is an empty base and two layers: the files every platform
// shares (a CA bundle from golang.org/x/crypto/x509roots/fallback, as pinned
// by this module's go.sum, never the build host's; Go's time zone database;
// /etc/passwd and /etc/group naming uid 65532) and the static stowage binary.
// Nothing else: no shell. Every time, owner and order in the layers is fixed,
// and the config's creation time is -created, so that the same inputs give
// the same digests. It prints the index's digest.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

type binaries map[string]string // os/arch -> path

func (b binaries) String() string { return fmt.Sprint(map[string]string(b)) }

func (b binaries) Set(v string) error {
	platform, path, ok := strings.Cut(v, "=")
	if !ok || strings.Count(platform, "/") != 1 || path == "" {
		return fmt.Errorf("%q is not OS/ARCH=PATH, e.g. linux/amd64=bin/linux_amd64/stowage", v)
	}
	b[platform] = path
	return nil
}

func main() {
	o := options{Binaries: binaries{}}
	flag.StringVar(&o.Out, "out", "", "the OCI image layout to write (replaced)")
	flag.Var(o.Binaries, "binary", "OS/ARCH=PATH of a static stowage binary; once per platform")
	flag.StringVar(&o.Zoneinfo, "zoneinfo", "", "Go's zoneinfo.zip ($(go env GOROOT)/lib/time/zoneinfo.zip)")
	flag.StringVar(&o.Version, "version", "", "the version the labels and the index's ref.name carry (v1.2.3, or dev)")
	flag.StringVar(&o.Commit, "commit", "", "the commit the binaries were built from (the revision label)")
	flag.Int64Var(&o.Created, "created", 0, "creation time of the images, in seconds since 1970 (SOURCE_DATE_EPOCH)")
	flag.StringVar(&o.Source, "source", "https://github.com/stowage-dev/stowage", "the source label")
	flag.StringVar(&o.Licenses, "licenses", "Apache-2.0", "the licenses label (SPDX)")
	flag.Parse()
	if err := o.validate(); err != nil {
		fmt.Fprintf(os.Stderr, "ociimage: %v\n", err)
		os.Exit(2)
	}
	digest, err := write(o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ociimage: %v\n", err)
		os.Exit(1)
	}
	fmt.Println(digest)
}

func (o options) validate() error {
	switch {
	case o.Out == "":
		return fmt.Errorf("-out: required: the folder to write the image layout to")
	case len(o.Binaries) == 0:
		return fmt.Errorf("-binary: required: give OS/ARCH=PATH once per platform")
	case o.Zoneinfo == "":
		return fmt.Errorf("-zoneinfo: required: $(go env GOROOT)/lib/time/zoneinfo.zip")
	case o.Version == "":
		return fmt.Errorf("-version: required: the release version (v1.2.3) or dev")
	}
	for p := range o.Binaries {
		if !strings.HasPrefix(p, "linux/") {
			return fmt.Errorf("-binary %s: the image runs on Linux only", p)
		}
	}
	return nil
}
