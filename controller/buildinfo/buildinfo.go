// Package buildinfo is what a build of stowage was stamped with: the release
// version and the commit it was built from. make build and make release set
// them with -ldflags -X (builds here run with -buildvcs=false, so Go's own
// build info carries no revision); a plain go build leaves them unknown.
package buildinfo

// Unknown is reported for what a build was not stamped with.
const Unknown = "unknown"

// Set by the linker:
//
//	-X github.com/stowage-dev/stowage/controller/buildinfo.version=v1.2.3
//	-X github.com/stowage-dev/stowage/controller/buildinfo.commit=<sha>
var version, commit string

// Version is the release version (v1.2.3), "dev" for a development build
// of make build, or Unknown.
func Version() string { return orUnknown(version) }

// Commit is the commit the build was made from, or Unknown.
func Commit() string { return orUnknown(commit) }

func orUnknown(s string) string {
	if s == "" {
		return Unknown
	}
	return s
}
