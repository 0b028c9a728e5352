package main

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/hashicorp/go-hclog"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/stowage-dev/stowage/controller/aws"
	"github.com/stowage-dev/stowage/controller/aws/amifamily"
	"github.com/stowage-dev/stowage/controller/buildinfo"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/logging"
	"github.com/stowage-dev/stowage/controller/operator"
	"github.com/stowage-dev/stowage/controller/options"
)

// Exit codes of `stowage run`.
const (
	exitOK      = 0
	exitFailed  = 1 // the controller could not start, or stopped on an error
	exitBadArgs = 2 // a flag or environment variable is invalid
)

// runController is `stowage run`: the in-cluster controller, until SIGTERM
// or an interrupt.
func runController(args []string, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return runControllerUntil(ctx, args, os.Getenv, stderr)
}

// runControllerUntil parses the options from args and getenv, then runs the
// controller until ctx ends. Logs go to stderr.
func runControllerUntil(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) int {
	o, err := options.Parse(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err == nil && o.Region == "" {
		err = errors.New("--region: required: set it (or AWS_REGION) to the cluster's region, e.g. us-east-1")
	}
	if err != nil {
		fmt.Fprintf(stderr, "stowage run: %v\n", err)
		return exitBadArgs
	}
	log := logging.New("stowage", o.LogLevel, o.LogFormat, stderr)
	// controller-runtime and client-go (leader election, reflectors) log
	// through logr and klog: one format, one stream.
	ctrl.SetLogger(logging.Logr(log.Named("runtime")))
	klog.SetLogger(logging.Logr(log.Named("client-go")))
	if err := startController(ctx, o, log); err != nil {
		log.Error("controller stopped", "error", err)
		return exitFailed
	}
	log.Info("controller stopped")
	return exitOK
}

// startController loads the kube config and the AWS clients, and runs the
// operator with the AWS cloud provider until ctx ends.
func startController(ctx context.Context, o *options.Options, log hclog.Logger) error {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading the kube config (in-cluster, or KUBECONFIG): %w", err)
	}
	version, err := operator.KubernetesVersion(cfg)
	if err != nil {
		return err
	}
	clients, err := aws.LoadClients(ctx, o.Region)
	if err != nil {
		return err
	}
	cluster, err := bootstrapCluster(o, cfg, log)
	if err != nil {
		return err
	}
	if cluster.CIDR == "" {
		if cluster.CIDR, err = aws.ServiceCIDR(ctx, clients.EKS, o.ClusterName); err != nil {
			return fmt.Errorf("--cluster-cidr: not set, and %w: set --cluster-cidr (or CLUSTER_CIDR) to the cluster's service CIDR, "+
				"e.g. 10.100.0.0/16, or grant eks:DescribeCluster", err)
		}
		log.Info("service CIDR read from eks:DescribeCluster", "cluster_cidr", cluster.CIDR)
	}
	clusterARN, err := aws.ClusterARN(ctx, clients.EKS, o.ClusterName)
	if err != nil {
		log.Warn("zonal shift awareness is off: launches do not avoid zones ARC shifts the cluster away from; grant eks:DescribeCluster",
			"error", err)
	}
	log.Info("starting", "version", buildinfo.Version(), "commit", buildinfo.Commit(), "cluster", o.ClusterName, "region", o.Region,
		"kubernetes_version", version)
	newCloud := func(mgr manager.Manager) (cloudprovider.CloudProvider, error) {
		return aws.New(clients, operator.NodeClasses{Reader: mgr.GetClient()}, aws.Options{
			Cluster: cluster, Region: o.Region, KubernetesVersion: version, Logger: log, NoKarpenterLabels: !o.KarpenterLabels,
			DryRun: o.DryRun, ClusterARN: clusterARN,
		}), nil
	}
	return operator.Run(ctx, cfg, o, newCloud, log)
}

// bootstrapCluster is what new nodes are told to join: the options' endpoint
// and CA, or else the ones this process reaches the API server with.
func bootstrapCluster(o *options.Options, cfg *rest.Config, log hclog.Logger) (amifamily.Cluster, error) {
	c := amifamily.Cluster{Name: o.ClusterName, Endpoint: o.ClusterEndpoint, CABundle: o.ClusterCABundle, CIDR: o.ClusterCIDR}
	if c.Endpoint == "" {
		c.Endpoint = cfg.Host
		log.Warn("--cluster-endpoint is not set: nodes will join the API server at the address this process uses",
			"endpoint", c.Endpoint)
	}
	if c.CABundle == "" {
		ca := cfg.CAData
		if len(ca) == 0 && cfg.CAFile != "" {
			var err error
			if ca, err = os.ReadFile(cfg.CAFile); err != nil {
				return c, fmt.Errorf("reading the API server's CA for --cluster-ca-bundle: %w", err)
			}
		}
		c.CABundle = base64.StdEncoding.EncodeToString(ca)
	}
	return c, nil
}
