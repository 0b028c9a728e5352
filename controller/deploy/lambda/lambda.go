// Package lambda holds the interruption Lambda's RBAC: a ClusterRole with
// exactly the permissions docs/guides/interruption.md lists, and its binding to the
// group the Lambda's IAM role is mapped to. They live apart from the
// controller's manifests (controller/deploy), which do not include them.
package lambda

import (
	"embed"
	"fmt"
	"io/fs"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/deploy"
)

// Names the manifests use.
const (
	// ClusterRole names the ClusterRole and its binding.
	ClusterRole = "stowage-interruption-lambda"
	// Group is the Kubernetes group the Lambda's IAM role maps to.
	Group = "stowage:interruption-lambda"
)

//go:embed *.yaml
var files embed.FS

// Manifests decodes the ClusterRole and the ClusterRoleBinding, strictly.
func Manifests() ([]client.Object, error) {
	paths, err := fs.Glob(files, "*.yaml")
	if err != nil {
		return nil, err
	}
	var out []client.Object
	for _, p := range paths {
		data, err := files.ReadFile(p)
		if err != nil {
			return nil, err
		}
		objs, err := deploy.Decode(data)
		if err != nil {
			return nil, fmt.Errorf("decoding %s: %w", p, err)
		}
		out = append(out, objs...)
	}
	return out, nil
}
