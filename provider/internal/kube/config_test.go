package kube_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stowage-dev/stowage/provider/internal/kube"
)

// TestConfigErrorsNameTheAttributeAndTheFix checks the messages of the
// settings that cannot work, without a cluster.
func TestConfigErrorsNameTheAttributeAndTheFix(t *testing.T) {
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	for _, c := range []struct {
		name string
		cfg  kube.Config
		want string
	}{
		{"host without credentials", kube.Config{Host: "https://10.0.0.1"}, "host is set without credentials: set token, or client_certificate and client_key, or eks_cluster_name"},
		{"half a client certificate", kube.Config{Host: "https://10.0.0.1", ClientCertificate: "PEM"}, "host is set without credentials"},
		{"certificate without key", kube.Config{Host: "https://10.0.0.1", Token: "t", ClientCertificate: "PEM"}, "client_certificate and client_key go together"},
		{"missing kubeconfig", kube.Config{KubeconfigPath: "/nonexistent/kubeconfig"}, "kubeconfig_path /nonexistent/kubeconfig"},
		{"EKS without a region", kube.Config{EKSClusterName: "prod"}, "no AWS region: set aws_region in the provider block, or AWS_REGION"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.cfg.RESTConfig(context.Background())
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestHostWithTokenNeedsNoCluster(t *testing.T) {
	cfg, err := kube.Config{Host: "https://10.0.0.1", Token: "t", CACertificate: "PEM"}.RESTConfig(context.Background())
	if err != nil || cfg.Host != "https://10.0.0.1" || cfg.BearerToken != "t" || string(cfg.CAData) != "PEM" {
		t.Fatalf("config = %+v, %v", cfg, err)
	}
}
