// Package lambdazip holds the interruption Lambda's deployment packages, one
// per architecture, embedded into the provider binary: `make lambda-embed`
// builds them from the same commit as the provider (a dependency of every
// make target that compiles it), so that the Lambda a provider deploys is
// always the one of its version, and a user never builds or uploads a zip.
package lambdazip

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"io/fs"
)

// Architectures maps Lambda's architectures to the zips' (Go's) names.
var Architectures = map[string]string{"x86_64": "amd64", "arm64": "arm64"}

//go:embed zips
var zips embed.FS

// Code returns the deployment package for a Lambda architecture (x86_64 or
// arm64). A provider compiled without the zips (a plain go build, not make)
// has none, and the error says how to build them.
func Code(architecture string) ([]byte, error) {
	goArch, ok := Architectures[architecture]
	if !ok {
		return nil, fmt.Errorf("architecture %q is not x86_64 or arm64", architecture)
	}
	name := "zips/stowage-interruption-lambda-" + goArch + ".zip"
	data, err := fs.ReadFile(zips, name)
	if err != nil {
		return nil, fmt.Errorf("this provider was built without the interruption Lambda's code (%s is missing): "+
			"build it with `make provider`, which runs `make lambda` into provider/internal/lambdazip/zips first", name)
	}
	return data, nil
}

// SHA256 is a package's digest as Lambda reports it (CodeSha256): base64 of
// its SHA-256.
func SHA256(code []byte) string {
	sum := sha256.Sum256(code)
	return base64.StdEncoding.EncodeToString(sum[:])
}
