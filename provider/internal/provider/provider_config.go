package provider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/stowage-dev/stowage/provider/internal/kube"
)

const accessDescription = "The provider reaches the cluster in one of three ways, tried in this order: an EKS cluster " +
	"(`eks_cluster_name`; the token is minted from the AWS credentials, the endpoint and CA come from `host` and " +
	"`cluster_ca_certificate` or from `eks:DescribeCluster`); a `host` with `cluster_ca_certificate` and a `token` or client " +
	"certificate; or a kubeconfig (`kubeconfig_path`, `kubeconfig_context`). Each attribute falls back to an environment " +
	"variable, named in its description. The cluster is only contacted by resources and by plan-time checks; " +
	"`stowage_plan` and `stowage_instance_types` need none."

type providerModel struct {
	KubeconfigPath    types.String `tfsdk:"kubeconfig_path"`
	KubeconfigContext types.String `tfsdk:"kubeconfig_context"`
	Host              types.String `tfsdk:"host"`
	CACertificate     types.String `tfsdk:"cluster_ca_certificate"`
	Token             types.String `tfsdk:"token"`
	ClientCertificate types.String `tfsdk:"client_certificate"`
	ClientKey         types.String `tfsdk:"client_key"`
	EKSClusterName    types.String `tfsdk:"eks_cluster_name"`
	AWSRegion         types.String `tfsdk:"aws_region"`
	AWSProfile        types.String `tfsdk:"aws_profile"`
	AWSEndpointURL    types.String `tfsdk:"aws_endpoint_url"`
}

// providerSetting is one provider attribute and its environment fallbacks.
type providerSetting struct {
	name, description string
	env               []string
	sensitive         bool
}

var providerSettings = []providerSetting{
	{"kubeconfig_path", "Path of a kubeconfig file; without it (and without `KUBE_CONFIG_PATH`), client-go's `KUBECONFIG` and ~/.kube/config.", []string{"KUBE_CONFIG_PATH"}, false},
	{"kubeconfig_context", "Context of the kubeconfig to use; its current context when unset.", []string{"KUBE_CTX"}, false},
	{"host", "Address of the Kubernetes API server, https://...", []string{"KUBE_HOST"}, false},
	{"cluster_ca_certificate", "PEM certificate of the CA that signed the API server's certificate.", []string{"KUBE_CLUSTER_CA_CERT_DATA"}, false},
	{"token", "Bearer token for the API server.", []string{"KUBE_TOKEN"}, true},
	{"client_certificate", "PEM client certificate for the API server; needs `client_key`.", []string{"KUBE_CLIENT_CERT_DATA"}, false},
	{"client_key", "PEM key of `client_certificate`.", []string{"KUBE_CLIENT_KEY_DATA"}, true},
	{"eks_cluster_name", "Name of an EKS cluster: the provider mints its bearer token from the AWS credentials, " +
		"and reads its endpoint and CA with eks:DescribeCluster unless `host` and `cluster_ca_certificate` are set.", []string{"STOWAGE_EKS_CLUSTER_NAME"}, false},
	{"aws_region", "AWS region of the EKS cluster and of the live instance catalogue.", []string{"AWS_REGION", "AWS_DEFAULT_REGION"}, false},
	{"aws_profile", "Shared-configuration profile of the AWS credentials.", []string{"AWS_PROFILE"}, false},
	{"aws_endpoint_url", "Base endpoint for every AWS service, such as an emulator's; per-service AWS_ENDPOINT_URL_<SERVICE> variables also work.", []string{"AWS_ENDPOINT_URL"}, false},
}

func providerAttributes() map[string]schema.Attribute {
	attrs := map[string]schema.Attribute{}
	for _, s := range providerSettings {
		desc := s.description + " Falls back to " + envList(s.env) + "."
		attrs[s.name] = schema.StringAttribute{Optional: true, Sensitive: s.sensitive, MarkdownDescription: desc}
	}
	return attrs
}

func envList(env []string) string {
	out := ""
	for i, e := range env {
		switch {
		case i == 0:
		case i == len(env)-1:
			out += " then "
		default:
			out += ", "
		}
		out += "`" + e + "`"
	}
	return out
}

// clusterAccess builds the Kubernetes client on first use.
type clusterAccess struct {
	cfg     kube.Config
	version string // the provider's
	// imageDigest is the controller image's index digest make release stamps.
	imageDigest string
	unknown     []string // attributes not known yet (at plan time)

	once   sync.Once
	client *kube.Client
	err    error

	awsOnce sync.Once // aws.go
	awsCfg  aws.Config
	awsErr  error

	plannedMu      sync.Mutex
	plannedClasses map[string]bool // NodeClasses this plan has planned so far
}

// planClass records that this plan declares a NodeClass, so that a pool
// naming it does not need it in the cluster.
func (a *clusterAccess) planClass(name string) {
	a.plannedMu.Lock()
	defer a.plannedMu.Unlock()
	if a.plannedClasses == nil {
		a.plannedClasses = map[string]bool{}
	}
	a.plannedClasses[name] = true
}

func (a *clusterAccess) classPlanned(name string) bool {
	a.plannedMu.Lock()
	defer a.plannedMu.Unlock()
	return a.plannedClasses[name]
}

func newClusterAccess(m providerModel) *clusterAccess {
	a := &clusterAccess{}
	get := func(name string, v types.String) string {
		if v.IsUnknown() {
			a.unknown = append(a.unknown, name)
			return ""
		}
		if !v.IsNull() {
			return v.ValueString()
		}
		for _, s := range providerSettings {
			if s.name == name {
				for _, e := range s.env {
					if val := os.Getenv(e); val != "" {
						return val
					}
				}
			}
		}
		return ""
	}
	a.cfg = kube.Config{
		KubeconfigPath: get("kubeconfig_path", m.KubeconfigPath), KubeconfigContext: get("kubeconfig_context", m.KubeconfigContext),
		Host: get("host", m.Host), CACertificate: get("cluster_ca_certificate", m.CACertificate), Token: get("token", m.Token),
		ClientCertificate: get("client_certificate", m.ClientCertificate), ClientKey: get("client_key", m.ClientKey),
		EKSClusterName: get("eks_cluster_name", m.EKSClusterName),
		AWS: kube.AWSConfig{Region: get("aws_region", m.AWSRegion), Profile: get("aws_profile", m.AWSProfile),
			Endpoint: get("aws_endpoint_url", m.AWSEndpointURL)},
	}
	return a
}

// errConfigUnknown is returned while the provider's settings depend on values known only at apply.
var errConfigUnknown = errors.New("the provider's cluster settings are not known until apply")

// Client returns the cluster client, building it once.
func (a *clusterAccess) Client(ctx context.Context) (*kube.Client, error) {
	if len(a.unknown) > 0 {
		return nil, fmt.Errorf("%w (%v)", errConfigUnknown, a.unknown)
	}
	a.once.Do(func() {
		cfg, err := a.cfg.RESTConfig(ctx)
		if err != nil {
			a.err = err
			return
		}
		a.client, a.err = kube.NewClient(cfg)
	})
	return a.client, a.err
}
