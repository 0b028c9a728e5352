package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// KarpenterKwok is Karpenter's core with its kwok cloud provider (the kwok/
// main package of sigs.k8s.io/karpenter), which build-components.sh builds
// for the head-to-head benchmark.
const KarpenterKwok = "karpenter-kwok"

// Karpenter is what build-components.sh leaves of Karpenter in the cache.
type Karpenter struct {
	// Binary is the karpenter-kwok executable.
	Binary string
	// CRDDir holds the CRDs its chart installs (NodePool, NodeClaim,
	// NodeOverlay, CapacityBuffer) and KWOKNodeClass's, as YAML files.
	CRDDir string
	// Version is the release it was built from, e.g. v1.15.0.
	Version string
}

// KarpenterAssets returns Karpenter's binary, CRDs and version, or an error
// wrapping ErrMissingAsset that names make tools when they are not built.
func KarpenterAssets() (Karpenter, error) {
	bin, err := Assets(KarpenterKwok)
	if err != nil {
		return Karpenter{}, err
	}
	cache, err := CacheDir()
	if err != nil {
		return Karpenter{}, err
	}
	dir := filepath.Join(cache, "karpenter")
	version, err := os.ReadFile(filepath.Join(dir, "version"))
	if err != nil {
		return Karpenter{}, &MissingAssetError{Name: "karpenter/version", Dir: cache}
	}
	crds := filepath.Join(dir, "crds")
	if matches, _ := filepath.Glob(filepath.Join(crds, "*.yaml")); len(matches) == 0 {
		return Karpenter{}, &MissingAssetError{Name: "*.yaml", Dir: crds}
	}
	k := Karpenter{Binary: filepath.Join(bin, KarpenterKwok), CRDDir: crds, Version: strings.TrimSpace(string(version))}
	if k.Version == "" {
		return Karpenter{}, fmt.Errorf("%s is empty: run `%s`", filepath.Join(dir, "version"), ToolsTarget)
	}
	return k, nil
}
