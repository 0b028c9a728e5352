// Package tfbed is the whole-system bed (internal/testbed) with nothing of
// Stowage installed, made ready for Terraform configurations that install
// all of it with the stowage provider: the AWS emulator also served over TLS
// (the interruption queue's policy refuses plain HTTP), a terraform CLI
// (internal/tfcli) whose provider reaches the bed's cluster and the emulator,
// the bed's service-account issuer trusted as the cluster's IAM OIDC
// provider, the runtime interface emulator running the Lambda functions
// Terraform deploys, and the controller run as the Deployment Terraform
// applied describes it. Fleets says what the controller's launches came to,
// and Leftovers what a destroy left behind.
package tfbed

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"time"

	"github.com/stowage-dev/stowage/controller/aws/iampolicy"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testbed"
	"github.com/stowage-dev/stowage/internal/testenv"
	"github.com/stowage-dev/stowage/internal/tfcli"
)

// NodeRole is the role the bed itself seeds in the emulator; Leftovers
// ignores it.
const NodeRole = "BedSeededNodeRole"

// Options configure Start.
type Options struct {
	// InstanceTypes the emulator offers; Catalogue() when nil.
	InstanceTypes []awsemu.InstanceTypeSpec
}

// Env is a running bed with a terraform CLI reaching it. Stop ends it.
type Env struct {
	Bed *testbed.Bed
	// CLI runs terraform with the provider built from this tree, the bed's
	// kubeconfig and AWS credentials of the emulator's administrator.
	CLI *tfcli.CLI
	// TLS serves the emulator over TLS; CABundle is its certificate, a PEM file.
	TLS      *httptest.Server
	CABundle string
	// Functions runs the Lambda functions the emulator is given.
	Functions *testbed.RIERuntime
	// OIDCProviderARN is the bed's issuer as an IAM OIDC provider, for IRSA.
	OIDCProviderARN string
	// Dir holds the CLI's mirror, the CA bundle and the controller's files.
	Dir string

	controller controllerBuild
	fleets     fleets
}

// Catalogue is the emulator's small catalogue and the named types of the
// built-in one (such as the GPU types a configuration's pools name).
func Catalogue(extra ...string) []awsemu.InstanceTypeSpec {
	types := awsemu.SmallCatalogue()
	for _, it := range awsemu.BuiltinCatalogue() {
		for _, name := range extra {
			if it.Name == name && !hasType(types, name) {
				types = append(types, it)
			}
		}
	}
	return types
}

func hasType(types []awsemu.InstanceTypeSpec, name string) bool {
	for _, t := range types {
		if t.Name == name {
			return true
		}
	}
	return false
}

// Start starts the bed, bare, with its emulator over TLS and a CLI for it,
// in dir. A missing component is an error naming `make tools`.
func Start(ctx context.Context, dir string, o Options) (*Env, error) {
	bin, err := testenv.Assets(testenv.Terraform, testenv.Etcd, testenv.KubeAPIServer, testenv.KubeScheduler,
		testenv.KubeControllerManager, testenv.Kwok, testenv.LambdaRIE)
	if err != nil {
		return nil, err
	}
	if o.InstanceTypes == nil {
		o.InstanceTypes = Catalogue()
	}
	b, err := testbed.Start(ctx, testbed.Options{BinDir: bin, Bare: true, NodeRole: NodeRole, InstanceTypes: o.InstanceTypes})
	if err != nil {
		return nil, err
	}
	e := &Env{Bed: b, Dir: dir}
	if err := e.prepare(ctx); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	return e, nil
}

func (e *Env) prepare(ctx context.Context) error {
	b := e.Bed
	e.Functions = &testbed.RIERuntime{Dir: filepath.Join(e.Dir, "functions"), EndpointURL: b.EmulatorURL}
	if err := os.MkdirAll(e.Functions.Dir, 0o755); err != nil {
		return err
	}
	b.Emulator.SetFunctionRuntime(e.Functions)
	e.TLS = httptest.NewTLSServer(e.fleets.record(b.Emulator.Handler()))
	e.CABundle = filepath.Join(e.Dir, "emulator-ca.pem")
	if err := os.WriteFile(e.CABundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: e.TLS.Certificate().Raw}), 0o600); err != nil {
		return err
	}
	var err error
	if e.OIDCProviderARN, err = b.TrustIssuer(ctx); err != nil {
		return fmt.Errorf("trusting the bed's issuer: %w", err)
	}
	if e.CLI, err = tfcli.New(filepath.Join(e.Dir, "terraform"), b.ControlPlane.KubeconfigPath); err != nil {
		return err
	}
	// Terraform runs as an IAM user of the account holding exactly the
	// operator's policy (iampolicy.Operator), as a platform team's pipeline
	// does, so that a call the policy lacks fails; the cluster maps it to
	// system:masters, as its creator's access entry would, so that a provider
	// block with eks_cluster_name authenticates with a token STS verifies.
	if err := b.Emulator.AddUser("terraform", terraformKey, terraformSecret,
		map[string]string{"StowageOperator": iampolicy.Operator().JSON()}); err != nil {
		return err
	}
	b.TokenWebhook.MapRole(TerraformUserARN, testbed.RoleMapping{Username: "terraform", Groups: []string{"system:masters"}})
	e.CLI.Env = append(e.CLI.Env, "AWS_CA_BUNDLE="+e.CABundle, "AWS_ACCESS_KEY_ID="+terraformKey,
		"AWS_SECRET_ACCESS_KEY="+terraformSecret, "AWS_CONFIG_FILE="+os.DevNull, "AWS_SHARED_CREDENTIALS_FILE="+os.DevNull,
		"AWS_EC2_METADATA_DISABLED=true", "AWS_PROFILE=", "AWS_REGION="+testbed.Region, "AWS_ENDPOINT_URL=")
	// A configuration that names no endpoint finds each service's in the
	// environment: the emulator over TLS, but STS, which EKS tokens are
	// signed for, at the endpoint the bed's token webhook replays them
	// against. (AWS_ENDPOINT_URL would also win over AWS_ENDPOINT_URL_STS
	// once the provider passes it on as the base endpoint.)
	for _, service := range endpointServices {
		e.CLI.Env = append(e.CLI.Env, "AWS_ENDPOINT_URL_"+service+"="+e.TLS.URL)
	}
	e.CLI.Env = append(e.CLI.Env, "AWS_ENDPOINT_URL_STS="+b.EmulatorURL)
	return nil
}

// endpointServices are the services the provider calls besides STS, as
// their AWS_ENDPOINT_URL_<service> variables name them.
var endpointServices = []string{"EC2", "EKS", "EVENTBRIDGE", "IAM", "LAMBDA", "PRICING", "SQS", "SSM", "CLOUDWATCH_LOGS"}

// Terraform's credentials, and the IAM user they are.
const (
	terraformKey    = "AKIDTERRAFORM"
	terraformSecret = "terraform"
	// TerraformUserARN is who Terraform runs as.
	TerraformUserARN = "arn:aws:iam::123456789012:user/terraform"
)

// Stop stops the TLS server and the bed. A Node that registered another
// allocatable than Stowage predicted is an error: no configuration tested
// here should launch one.
func (e *Env) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mismatches := e.Bed.CheckAllocatable(ctx)
	if e.TLS != nil {
		e.TLS.Close()
	}
	return errors.Join(mismatches, e.Bed.Stop())
}

// Values are the bed's coordinates, by the names the configurations'
// variables use: aws_endpoint (the emulator over TLS), cluster_name,
// cluster_endpoint, cluster_ca (base64 PEM, as EKS's
// certificateAuthority.data), oidc_provider_arn and lambda_architecture
// (this machine's, for the runtime interface emulator).
func (e *Env) Values() map[string]string {
	return map[string]string{
		"aws_endpoint":        e.TLS.URL,
		"cluster_name":        e.Bed.Cluster,
		"cluster_endpoint":    e.Bed.ControlPlane.APIServerURL,
		"cluster_ca":          base64.StdEncoding.EncodeToString(e.Bed.ControlPlane.Config.CAData),
		"oidc_provider_arn":   e.OIDCProviderARN,
		"lambda_architecture": map[string]string{"amd64": "x86_64", "arm64": "arm64"}[runtime.GOARCH],
	}
}

// Flags renders variables as -var flags, in a stable order.
func Flags(vars map[string]string) []string {
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, 2*len(keys))
	for _, k := range keys {
		out = append(out, "-var", k+"="+vars[k])
	}
	return out
}
