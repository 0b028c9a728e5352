package operator

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// KubernetesVersion asks the API server for its version and returns it as
// major.minor (e.g. "1.37"): the version whose node images the cloud
// provider launches.
func KubernetesVersion(cfg *rest.Config) (string, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return "", fmt.Errorf("building the discovery client: %w", err)
	}
	info, err := dc.ServerVersion()
	if err != nil {
		return "", fmt.Errorf("getting the API server's version: %w", err)
	}
	return MinorVersion(info)
}

// MinorVersion renders a server version as major.minor, dropping the "+"
// that EKS appends to the minor version.
func MinorVersion(info *version.Info) (string, error) {
	major, minor := strings.TrimSuffix(info.Major, "+"), strings.TrimSuffix(info.Minor, "+")
	if _, err := strconv.Atoi(major); err != nil {
		return "", fmt.Errorf("reading the API server's version: major %q is not a number", info.Major)
	}
	if _, err := strconv.Atoi(minor); err != nil {
		return "", fmt.Errorf("reading the API server's version: minor %q is not a number", info.Minor)
	}
	return major + "." + minor, nil
}
