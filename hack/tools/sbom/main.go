// Command sbom writes the CycloneDX SBOM of a Go binary's modules with
// cyclonedx-gomod's generator, whose command line can fix the serial number
// but only drop the timestamp: here both depend on the release alone, so
// that the same commit gives the same bytes.
//
//	sbom -version v1.2.3 -commit SHA -created UNIX-SECONDS -o OUT.cdx.json BINARY
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/CycloneDX/cyclonedx-gomod/pkg/generate/bin"
	"github.com/google/uuid"
	"github.com/rs/zerolog"
)

const generatorModule = "github.com/CycloneDX/cyclonedx-gomod"

func main() {
	version := flag.String("version", "", "the release version, the main component's")
	commit := flag.String("commit", "", "the commit the binary was built from")
	created := flag.Int64("created", 0, "the SBOM's timestamp, in seconds since 1970 (SOURCE_DATE_EPOCH)")
	out := flag.String("o", "", "the SBOM to write (CycloneDX 1.6 JSON)")
	flag.Parse()
	if *version == "" || *out == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: sbom -version v1.2.3 -commit SHA -created SECONDS -o OUT.cdx.json BINARY")
		os.Exit(2)
	}
	if err := write(*out, flag.Arg(0), *version, *commit, time.Unix(*created, 0).UTC()); err != nil {
		fmt.Fprintf(os.Stderr, "sbom: %v\n", err)
		os.Exit(1)
	}
}

func write(out, binary, version, commit string, created time.Time) error {
	g, err := bin.NewGenerator(binary, bin.WithVersionOverride(version), bin.WithLogger(zerolog.Nop()))
	if err != nil {
		return err
	}
	bom, err := g.Generate()
	if err != nil {
		return fmt.Errorf("reading the modules of %s: %w", binary, err)
	}
	// A name-based UUID: one per release and commit.
	bom.SerialNumber = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/stowage-dev/stowage/releases/"+version+"#"+commit)).URN()
	if bom.Metadata == nil {
		bom.Metadata = &cdx.Metadata{}
	}
	bom.Metadata.Timestamp = created.Format(time.RFC3339)
	bom.Metadata.Tools = &cdx.ToolsChoice{Components: &[]cdx.Component{{Type: cdx.ComponentTypeApplication,
		Name: "cyclonedx-gomod", Group: "github.com/CycloneDX", Version: moduleVersion(generatorModule)}}}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	enc := cdx.NewBOMEncoder(f, cdx.BOMFileFormatJSON).SetPretty(true)
	if err := enc.EncodeVersion(bom, cdx.SpecVersion1_6); err != nil {
		_ = f.Close()
		return fmt.Errorf("writing %s: %w", out, err)
	}
	return f.Close()
}

func moduleVersion(path string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path == path {
				return m.Version
			}
		}
	}
	return "unknown"
}
