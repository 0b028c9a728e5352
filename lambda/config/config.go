// Package config reads the interruption Lambda's configuration from its
// environment and builds its Kubernetes client configuration: a kubeconfig
// file (tests), or an EKS cluster reached with the EKS bearer token minted
// from the function's IAM role (internal/ekstoken).
package config

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/aws"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"

	"github.com/stowage-dev/stowage/internal/ekstoken"
	"github.com/stowage-dev/stowage/lambda/handler"
)

// The environment variables the Lambda reads.
const (
	// EnvKubeconfig is a kubeconfig file's path; set it or the three EKS variables.
	EnvKubeconfig = "KUBECONFIG"
	// EnvClusterName is the EKS cluster's name, signed into the token.
	EnvClusterName = "CLUSTER_NAME"
	// EnvClusterEndpoint is the EKS API server's URL.
	EnvClusterEndpoint = "CLUSTER_ENDPOINT"
	// EnvClusterCA is the cluster's CA bundle, base64 PEM as EKS's
	// DescribeCluster returns it (certificateAuthority.data).
	EnvClusterCA = "CLUSTER_CA_DATA"
	// EnvRebalance is ignore (the default) or mark.
	EnvRebalance = "REBALANCE_RECOMMENDATION"
	// EnvLogLevel is the hclog level (info by default).
	EnvLogLevel = "LOG_LEVEL"
)

// Client rates: a batch of ten records reads and writes a few Nodes each.
const (
	clientQPS   = 50
	clientBurst = 100
)

// Config is the Lambda's configuration.
type Config struct {
	Kubeconfig                   string
	ClusterName, ClusterEndpoint string
	ClusterCA                    []byte
	Rebalance, LogLevel          string
}

// FromEnv reads the configuration; each error names the variable and the fix.
func FromEnv(getenv func(string) string) (Config, error) {
	c := Config{Kubeconfig: getenv(EnvKubeconfig), ClusterName: getenv(EnvClusterName),
		ClusterEndpoint: getenv(EnvClusterEndpoint), Rebalance: getenv(EnvRebalance), LogLevel: getenv(EnvLogLevel)}
	if c.Rebalance == "" {
		c.Rebalance = handler.RebalanceIgnore
	}
	if c.Rebalance != handler.RebalanceIgnore && c.Rebalance != handler.RebalanceMark {
		return Config{}, fmt.Errorf("%s=%q: set it to %s or %s", EnvRebalance, c.Rebalance, handler.RebalanceIgnore, handler.RebalanceMark)
	}
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	eks := c.ClusterName != "" || c.ClusterEndpoint != "" || getenv(EnvClusterCA) != ""
	switch {
	case c.Kubeconfig != "" && eks:
		return Config{}, fmt.Errorf("both %s and %s/%s/%s are set: set only the EKS variables (or, in tests, only %s)",
			EnvKubeconfig, EnvClusterName, EnvClusterEndpoint, EnvClusterCA, EnvKubeconfig)
	case c.Kubeconfig != "":
		return c, nil
	}
	return c, c.readEKS(getenv)
}

func (c *Config) readEKS(getenv func(string) string) error {
	for _, v := range []struct{ name, value string }{{EnvClusterName, c.ClusterName}, {EnvClusterEndpoint, c.ClusterEndpoint}, {EnvClusterCA, getenv(EnvClusterCA)}} {
		if v.value == "" {
			return fmt.Errorf("%s is not set: set %s, %s and %s to the EKS cluster's name, endpoint and CA data",
				v.name, EnvClusterName, EnvClusterEndpoint, EnvClusterCA)
		}
	}
	if u, err := url.Parse(c.ClusterEndpoint); err != nil || u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("%s=%q: set it to the cluster's https:// endpoint", EnvClusterEndpoint, c.ClusterEndpoint)
	}
	ca, err := base64.StdEncoding.DecodeString(getenv(EnvClusterCA))
	if err != nil || len(ca) == 0 {
		return fmt.Errorf("%s is not base64: set it to the cluster's certificateAuthority.data", EnvClusterCA)
	}
	c.ClusterCA = ca
	return nil
}

// RESTConfig builds the client configuration: the kubeconfig's, or the EKS
// cluster's with a bearer token minted from awsCfg's credentials and
// refreshed before it lapses (STS options, e.g. an endpoint, may follow).
func (c Config) RESTConfig(_ context.Context, awsCfg aws.Config, clk clock.PassiveClock) (*rest.Config, error) {
	if c.Kubeconfig != "" {
		rc, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("reading %s %s: %w", EnvKubeconfig, c.Kubeconfig, err)
		}
		rc.QPS, rc.Burst = clientQPS, clientBurst
		return rc, nil
	}
	src := ekstoken.New(awsCfg, c.ClusterName, clk)
	return &rest.Config{
		Host:            c.ClusterEndpoint,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.ClusterCA},
		WrapTransport:   src.Transport,
		QPS:             clientQPS, Burst: clientBurst,
		UserAgent: "stowage-interruption-lambda",
	}, nil
}

// Handler returns the handler's part of the configuration.
func (c Config) Handler() handler.Config { return handler.Config{Rebalance: c.Rebalance} }
