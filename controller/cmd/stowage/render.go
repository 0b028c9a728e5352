package main

import (
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws"
	"github.com/stowage-dev/stowage/controller/aws/amifamily"
	"github.com/stowage-dev/stowage/controller/provisioning"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/snapshotfile"
)

const renderUsage = `usage: stowage render user-data --manifests FILE [--nodeclass NAME] [--nodepool NAME] --cluster-name NAME
       --cluster-endpoint URL [--cluster-ca-bundle BASE64] [--cluster-cidr CIDR]
`

type renderFlags struct {
	manifests, nodeClass, nodePool string
	cluster                        amifamily.Cluster
}

// runRender is `stowage render user-data`: the user data a launch of the
// NodeClass (and the pool's labels and taints) carries, as the node reads it.
func runRender(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "user-data" {
		fmt.Fprint(stderr, renderUsage)
		return exitBadArgs
	}
	var f renderFlags
	fs := flag.NewFlagSet("render user-data", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.manifests, "manifests", "", "YAML of Stowage's (or Karpenter's) NodePools and NodeClasses (required)")
	fs.StringVar(&f.nodeClass, "nodeclass", "", "the NodeClass (the pool's, or the file's only one, when unset)")
	fs.StringVar(&f.nodePool, "nodepool", "", "a NodePool whose labels and taints the nodes carry")
	fs.StringVar(&f.cluster.Name, "cluster-name", "", "as stowage run's: the EKS cluster's name (required)")
	fs.StringVar(&f.cluster.Endpoint, "cluster-endpoint", "", "as stowage run's: the API server's https URL (required)")
	fs.StringVar(&f.cluster.CABundle, "cluster-ca-bundle", "", "as stowage run's: the API server's CA, base64 PEM")
	fs.StringVar(&f.cluster.CIDR, "cluster-cidr", "", "as stowage run's: the cluster's service CIDR")
	if err := fs.Parse(args[1:]); err != nil {
		return exitBadArgs
	}
	if err := f.validate(); err != nil {
		fmt.Fprintf(stderr, "stowage render user-data: %v\n", err)
		return exitBadArgs
	}
	text, replaced, err := f.render(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "stowage render user-data: %v\n", err)
		return exitFailed
	}
	for _, s := range replaced {
		fmt.Fprintf(stderr, "warning: spec.userData's %s gives way to Stowage's own\n", s)
	}
	fmt.Fprint(stdout, text)
	return exitOK
}

func (f renderFlags) validate() error {
	var errs []error
	if f.manifests == "" {
		errs = append(errs, errors.New("--manifests: required: name a YAML file of NodePools and NodeClasses"))
	}
	if f.cluster.Name == "" {
		errs = append(errs, errors.New("--cluster-name: required: the EKS cluster's name"))
	}
	if u, err := url.Parse(f.cluster.Endpoint); err != nil || u.Scheme != "https" || u.Host == "" {
		errs = append(errs, fmt.Errorf("--cluster-endpoint: %q is not an https URL: use the cluster's endpoint, e.g. https://ABCD.gr7.us-east-1.eks.amazonaws.com", f.cluster.Endpoint))
	}
	if _, err := base64.StdEncoding.DecodeString(f.cluster.CABundle); err != nil {
		errs = append(errs, errors.New("--cluster-ca-bundle: not base64: use the cluster's certificateAuthority.data"))
	}
	if _, _, err := net.ParseCIDR(f.cluster.CIDR); err != nil && f.cluster.CIDR != "" {
		errs = append(errs, fmt.Errorf("--cluster-cidr: %q is not a CIDR: use the cluster's service CIDR, e.g. 10.100.0.0/16", f.cluster.CIDR))
	}
	return errors.Join(errs...)
}

// render reads the manifests and renders through the AWS cloud provider's
// own launch template code.
func (f renderFlags) render(stderr io.Writer) (string, []string, error) {
	file, err := os.Open(f.manifests)
	if err != nil {
		return "", nil, fmt.Errorf("opening --manifests: %w", err)
	}
	defer file.Close()
	objs, err := snapshotfile.Read(file)
	if err != nil {
		return "", nil, fileError(f.manifests, err)
	}
	printWarnings(stderr, f.manifests, objs.Warnings)
	claim, nc, err := f.pick(objs)
	if err != nil {
		return "", nil, err
	}
	if family := amifamily.Family(nc); family == amifamily.FamilyAL2023 && (f.cluster.CIDR == "" || f.cluster.CABundle == "") {
		return "", nil, fmt.Errorf("--cluster-cidr and --cluster-ca-bundle: nodeclass %s's nodes run nodeadm, which requires both", nc.Name)
	}
	cp := aws.New(aws.Clients{}, aws.StaticNodeClasses{nc.Name: nc}, aws.Options{Cluster: f.cluster})
	cfg, err := cp.LaunchTemplate(claim, nc, "")
	if err != nil {
		return "", nil, err
	}
	text, err := base64.StdEncoding.DecodeString(cfg.UserData)
	if err != nil {
		return "", nil, fmt.Errorf("decoding the launch template's user data: %w", err)
	}
	replaced, err := cp.ReplacedUserData(nc)
	return string(text), replaced, err
}

// pick finds the NodeClass, and the claim a launch of the pool (or of no
// pool) carries.
func (f renderFlags) pick(objs *snapshotfile.Objects) (*v1alpha1.NodeClaim, *v1alpha1.NodeClass, error) {
	claim, name := &v1alpha1.NodeClaim{}, f.nodeClass
	if f.nodePool != "" {
		pool := find(objs.NodePools, func(p *v1alpha1.NodePool) string { return p.Name }, f.nodePool)
		if pool == nil {
			return nil, nil, fmt.Errorf("--nodepool: %s: no NodePool %q; the file has %s", f.manifests, f.nodePool, names(objs.NodePools, func(p *v1alpha1.NodePool) string { return p.Name }))
		}
		claim = provisioning.NodeClaimFor(&scheduler.NewNodeClaim{}, pool)
		if ref := pool.Spec.Template.Spec.NodeClassRef; ref != nil && name == "" {
			name = ref.Name
		}
	}
	if name == "" && len(objs.NodeClasses) == 1 {
		name = objs.NodeClasses[0].Name
	}
	nc := find(objs.NodeClasses, func(c *v1alpha1.NodeClass) string { return c.Name }, name)
	if nc == nil {
		return nil, nil, fmt.Errorf("--nodeclass: %s: no NodeClass %q; the file has %s", f.manifests, name, names(objs.NodeClasses, func(c *v1alpha1.NodeClass) string { return c.Name }))
	}
	return claim, nc, nil
}

func find[T any](list []T, name func(T) string, want string) T {
	var zero T
	for _, x := range list {
		if name(x) == want {
			return x
		}
	}
	return zero
}

func names[T any](list []T, name func(T) string) string {
	out := make([]string, 0, len(list))
	for _, x := range list {
		out = append(out, name(x))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}
