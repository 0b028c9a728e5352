package testbed

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"

	"github.com/hashicorp/go-hclog"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	stowaws "github.com/stowage-dev/stowage/controller/aws"
	"github.com/stowage-dev/stowage/controller/aws/amifamily"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/deploy"
	"github.com/stowage-dev/stowage/controller/operator"
	"github.com/stowage-dev/stowage/controller/options"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// OperatorOptions vary one in-process `stowage run`.
type OperatorOptions struct {
	// Flags are `stowage run` flags after the bed's (Flags); a later one wins.
	Flags []string
	// Logger receives the operator's logs; hclog.NewNullLogger when nil.
	Logger hclog.Logger
	// Wrap, when set, wraps the AWS cloud provider, e.g. to crash after a launch.
	Wrap func(*stowaws.CloudProvider) cloudprovider.CloudProvider
	// Options go to operator.New after the bed's own.
	Options []operator.Option
}

// Flags are the `stowage run` flags the bed passes every operator: its
// cluster, its API server's service CIDR and region, no listening ports, and
// leases in the manifests' namespace short enough for quick failovers yet
// long enough for two busy cores.
func (b *Bed) Flags() []string {
	return []string{
		"--cluster-name=" + b.Cluster, "--cluster-cidr=" + testenv.ServiceClusterIPRange, "--region=" + Region,
		"--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--leader-election-namespace=" + deploy.Namespace, "--leader-election-lease-duration=4s",
		"--leader-election-renew-deadline=3s", "--leader-election-retry-period=500ms",
	}
}

// NewOperator builds `stowage run` as its main does, with the real AWS cloud
// provider on the emulator's clients, acting as ServiceAccountUser. Start it
// with its Start method; it runs until that context ends.
func (b *Bed) NewOperator(ctx context.Context, o OperatorOptions) (*operator.Operator, error) {
	opts, err := options.Parse(append(b.Flags(), o.Flags...), func(string) string { return "" }, io.Discard)
	if err != nil {
		return nil, fmt.Errorf("parsing the operator's flags: %w", err)
	}
	log := o.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	cluster := amifamily.Cluster{Name: b.Cluster, Endpoint: b.ControlPlane.APIServerURL,
		CABundle: base64.StdEncoding.EncodeToString(b.ControlPlane.Config.CAData), CIDR: opts.ClusterCIDR}
	clusterARN, err := stowaws.ClusterARN(ctx, b.Clients.EKS, b.Cluster) // as stowage run reads it, for zonal shifts
	if err != nil {
		return nil, err
	}
	newCloud := func(mgr manager.Manager) (cloudprovider.CloudProvider, error) {
		cp := stowaws.New(b.Clients, operator.NodeClasses{Reader: mgr.GetClient()}, stowaws.Options{
			Cluster: cluster, Region: Region, KubernetesVersion: b.KubernetesVersion, Logger: log, NoKarpenterLabels: !opts.KarpenterLabels,
			DryRun: opts.DryRun, ClusterARN: clusterARN,
		})
		if o.Wrap != nil {
			return o.Wrap(cp), nil
		}
		return cp, nil
	}
	return operator.New(ctx, b.AsStowage, opts, newCloud, log, o.Options...)
}

// FreeAddr returns a loopback address with a port free at the time of the
// call, e.g. for an operator's --metrics-bind-address.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	addr := l.Addr().String()
	return addr, l.Close()
}
