// Package kube reaches the cluster for the Terraform provider: it builds a
// rest.Config from the provider's settings (a kubeconfig; a host with a CA and
// a token or client certificate; or an EKS cluster, whose token is minted by
// internal/ekstoken and whose endpoint comes from eks:DescribeCluster), and
// reads and writes Stowage's objects with server-side apply.
package kube

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"

	"github.com/stowage-dev/stowage/internal/ekstoken"
)

// Config is how the provider reaches the cluster and AWS. Every field names
// the provider attribute it comes from, for error messages.
type Config struct {
	KubeconfigPath    string // kubeconfig_path
	KubeconfigContext string // kubeconfig_context
	Host              string // host
	CACertificate     string // cluster_ca_certificate, PEM
	Token             string // token
	ClientCertificate string // client_certificate, PEM
	ClientKey         string // client_key, PEM
	EKSClusterName    string // eks_cluster_name
	AWS               AWSConfig
}

// AWSConfig overrides the AWS SDK's standard configuration chain.
type AWSConfig struct {
	Region   string // aws_region
	Profile  string // aws_profile
	Endpoint string // aws_endpoint_url: one base endpoint for every service (an emulator)
}

// LoadAWS loads the AWS configuration: the standard chain (environment,
// shared files, IRSA, instance roles) with the overrides applied.
func (c AWSConfig) LoadAWS(ctx context.Context) (aws.Config, error) {
	var opts []func(*config.LoadOptions) error
	if c.Region != "" {
		opts = append(opts, config.WithRegion(c.Region))
	}
	if c.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(c.Profile))
	}
	if c.Endpoint != "" {
		opts = append(opts, config.WithBaseEndpoint(c.Endpoint))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("loading the AWS configuration (aws_region, aws_profile, or the AWS_* environment): %w", err)
	}
	if cfg.Region == "" {
		return aws.Config{}, errors.New("no AWS region: set aws_region in the provider block, or AWS_REGION")
	}
	return cfg, nil
}

// RESTConfig builds the client configuration; EKS mode calls AWS.
func (c Config) RESTConfig(ctx context.Context) (*rest.Config, error) {
	switch {
	case c.EKSClusterName != "":
		return c.eksConfig(ctx)
	case c.Host != "":
		return c.staticConfig()
	}
	return c.kubeconfig()
}

func (c Config) staticConfig() (*rest.Config, error) {
	if c.Token == "" && (c.ClientCertificate == "" || c.ClientKey == "") {
		return nil, errors.New("host is set without credentials: set token, or client_certificate and client_key, or eks_cluster_name to use an EKS token")
	}
	if (c.ClientCertificate == "") != (c.ClientKey == "") {
		return nil, errors.New("client_certificate and client_key go together: set both or neither")
	}
	return &rest.Config{
		Host:        c.Host,
		BearerToken: c.Token,
		TLSClientConfig: rest.TLSClientConfig{
			CAData: []byte(c.CACertificate), CertData: []byte(c.ClientCertificate), KeyData: []byte(c.ClientKey),
		},
	}, nil
}

func (c Config) kubeconfig() (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if c.KubeconfigPath != "" {
		if _, err := os.Stat(c.KubeconfigPath); err != nil {
			return nil, fmt.Errorf("kubeconfig_path %s: %w; point it at a kubeconfig file, or set host, or eks_cluster_name", c.KubeconfigPath, err)
		}
		rules.ExplicitPath = c.KubeconfigPath
	}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: c.KubeconfigContext}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig (kubeconfig_path, kubeconfig_context, KUBE_CONFIG_PATH or KUBECONFIG): %w; "+
			"or set host, or eks_cluster_name", err)
	}
	return cfg, nil
}

// eksConfig takes the endpoint and CA from configuration or DescribeCluster,
// and signs every request with a fresh EKS token.
func (c Config) eksConfig(ctx context.Context) (*rest.Config, error) {
	awsCfg, err := c.AWS.LoadAWS(ctx)
	if err != nil {
		return nil, err
	}
	host, ca := c.Host, []byte(c.CACertificate)
	if host == "" || len(ca) == 0 {
		h, pem, err := describeCluster(ctx, awsCfg, c.EKSClusterName)
		if err != nil {
			return nil, err
		}
		if host == "" {
			host = h
		}
		if len(ca) == 0 {
			ca = pem
		}
	}
	src := ekstoken.New(awsCfg, c.EKSClusterName, clock.RealClock{})
	return &rest.Config{Host: host, TLSClientConfig: rest.TLSClientConfig{CAData: ca}, WrapTransport: src.Transport}, nil
}

func describeCluster(ctx context.Context, cfg aws.Config, name string) (string, []byte, error) {
	out, err := eks.NewFromConfig(cfg).DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(name)})
	if err != nil {
		return "", nil, fmt.Errorf("describing EKS cluster %s (eks_cluster_name): %w; check the name and region, or set host and cluster_ca_certificate", name, err)
	}
	cl := out.Cluster
	if cl == nil || aws.ToString(cl.Endpoint) == "" || cl.CertificateAuthority == nil {
		return "", nil, fmt.Errorf("EKS cluster %s has no endpoint or certificate yet (is it still creating?); set host and cluster_ca_certificate, or wait for it", name)
	}
	pem, err := base64.StdEncoding.DecodeString(aws.ToString(cl.CertificateAuthority.Data))
	if err != nil {
		return "", nil, fmt.Errorf("decoding the certificate authority of EKS cluster %s: %w", name, err)
	}
	return aws.ToString(cl.Endpoint), pem, nil
}
