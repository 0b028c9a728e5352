package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// options are the flags.
type options struct {
	Out                               string
	Binaries                          binaries
	Zoneinfo                          string
	Version, Commit, Source, Licenses string
	Created                           int64
}

// The user the controller runs as, as distroless's nonroot.
const (
	uid  = 65532
	user = "65532:65532"
)

// labels are the OCI annotation keys the config's labels and the index carry.
func (o options) labels() map[string]string {
	return map[string]string{
		"org.opencontainers.image.source":   o.Source,
		"org.opencontainers.image.revision": o.Commit,
		"org.opencontainers.image.version":  o.Version,
		"org.opencontainers.image.licenses": o.Licenses,
		"org.opencontainers.image.title":    "stowage",
		"org.opencontainers.image.created":  o.created().Format(time.RFC3339),
	}
}

func (o options) created() time.Time { return time.Unix(o.Created, 0).UTC() }

// write builds the index and writes the layout, returning the index's digest.
func write(o options) (string, error) {
	base, err := baseLayer(o)
	if err != nil {
		return "", err
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	platforms := make([]string, 0, len(o.Binaries))
	for p := range o.Binaries {
		platforms = append(platforms, p)
	}
	slices.Sort(platforms)
	for _, p := range platforms {
		img, err := image(o, p, base)
		if err != nil {
			return "", fmt.Errorf("building the %s image: %w", p, err)
		}
		goos, arch, _ := strings.Cut(p, "/")
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: goos, Architecture: arch}}})
	}
	annotated, ok := mutate.Annotations(idx, o.labels()).(v1.ImageIndex)
	if !ok {
		return "", fmt.Errorf("annotating the index: not an index")
	}
	digest, err := annotated.Digest()
	if err != nil {
		return "", err
	}
	if err := os.RemoveAll(o.Out); err != nil {
		return "", err
	}
	lp, err := layout.Write(o.Out, empty.Index)
	if err != nil {
		return "", fmt.Errorf("writing the layout: %w", err)
	}
	ref := map[string]string{"org.opencontainers.image.ref.name": o.Version}
	if err := lp.AppendIndex(annotated, layout.WithAnnotations(ref)); err != nil {
		return "", fmt.Errorf("writing the index into the layout: %w", err)
	}
	return digest.String(), nil
}

// image is one platform's image: the shared base layer, then the binary.
func image(o options, platform string, base v1.Layer) (v1.Image, error) {
	bin, err := binaryLayer(o.Binaries[platform], o.created())
	if err != nil {
		return nil, err
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, MediaType: types.OCILayer, History: v1.History{Created: v1.Time{Time: o.created()},
			CreatedBy: "ociimage: CA bundle, time zones, passwd (uid " + fmt.Sprint(uid) + ")"}},
		mutate.Addendum{Layer: bin, MediaType: types.OCILayer, History: v1.History{Created: v1.Time{Time: o.created()},
			CreatedBy: "ociimage: /stowage"}})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	goos, arch, _ := strings.Cut(platform, "/")
	cf.OS, cf.Architecture = goos, arch
	cf.Created = v1.Time{Time: o.created()}
	cf.Config = v1.Config{
		User:       user,
		Entrypoint: []string{"/stowage"},
		Cmd:        []string{"run"},
		WorkingDir: "/",
		Env: []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
			"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"},
		Labels: o.labels(),
	}
	return mutate.ConfigFile(img, cf)
}
