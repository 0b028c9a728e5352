package provider_test

import (
	"encoding/pem"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"

	"k8s.io/utils/clock"

	"github.com/stowage-dev/stowage/controller/aws/iampolicy"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testbed"
)

// The cluster names the EKS tests use, and the static token the host tests use.
const (
	eksCluster = "acc-eks"
	// eksOther is another cluster at the same endpoint: a token signed for it
	// must not authenticate to eksCluster.
	eksOther    = "acc-eks-other"
	staticToken = "acc-static-token-0123456789"
)

// The acceptance tests' AWS credentials (main_test.go sets them) and the IAM
// user they are: one that holds the operator's policy (iampolicy.Operator).
const (
	accessKeyID     = "AKIDACCEPTANCE"
	secretAccessKey = "acceptance"
	accUserARN      = "arn:aws:iam::123456789012:user/acceptance"
)

// access is what the provider's access modes reach the bed through: a static
// token the API server knows, the bed's EKS token webhook (which verifies a
// token by replaying its presigned GetCallerIdentity against the emulator's
// STS, and maps the IAM identity that signed it), and the AWS emulator that
// answers eks:DescribeCluster.
var access struct {
	emulator *httptest.Server // over TLS: queue policies deny plain HTTP
	sts      *httptest.Server // the same emulator over HTTP, the STS endpoint EKS tokens are signed for
	emu      *awsemu.Emulator
	webhook  *testbed.TokenWebhook
}

// accessFlags starts the webhook and writes the files kube-apiserver needs
// for static tokens and token webhooks; dir outlives the control plane.
func accessFlags(dir string) ([]string, error) {
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(staticToken+",acc-admin,acc-admin,system:masters\n"), 0o600); err != nil {
		return nil, err
	}
	w, err := testbed.StartTokenWebhook(dir, eksCluster, clock.RealClock{})
	if err != nil {
		return nil, err
	}
	access.webhook = w
	// The acceptance tests' IAM user administers the cluster, as its
	// creator's access entry would make it.
	w.MapRole(accUserARN, testbed.RoleMapping{Username: "acc-eks-admin", Groups: []string{"system:masters"}})
	return append([]string{"--token-auth-file=" + tokens}, w.Flags()...), nil
}

// startEmulator serves the emulated AWS over TLS, with eks:DescribeCluster
// for eksCluster (and eksOther) at the bed's API server, and STS over HTTP
// for the webhook to verify tokens with; it makes the AWS SDK (the
// provider's, in this process) trust the TLS certificate through
// AWS_CA_BUNDLE, written into dir.
func startEmulator(endpoint string, caPEM []byte, dir string) error {
	ecfg := awsemu.DefaultConfig()
	ecfg.NoSpotServiceLinkedRole = true // an account that never ran spot: stowage_spot_service_linked_role makes it
	e := awsemu.New(ecfg)
	for _, name := range []string{eksCluster, eksOther} {
		e.AddEKSCluster(awsemu.EKSCluster{Name: name, Endpoint: endpoint, CAData: caPEM, Version: "1.37"})
	}
	// Terraform runs as an IAM user holding exactly the operator's policy:
	// a call the policy lacks fails the test that makes it.
	if err := e.AddUser("acceptance", accessKeyID, secretAccessKey, map[string]string{"StowageOperator": iampolicy.Operator().JSON()}); err != nil {
		return err
	}
	access.emu, access.emulator, access.sts = e, httptest.NewTLSServer(e.Handler()), httptest.NewServer(e.Handler())
	if err := access.webhook.SetSTS(access.sts.URL); err != nil {
		return err
	}
	bundle := filepath.Join(dir, "emulator-ca.pem")
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: access.emulator.Certificate().Raw})
	if err := os.WriteFile(bundle, cert, 0o600); err != nil {
		return err
	}
	return os.Setenv("AWS_CA_BUNDLE", bundle)
}

// awsProvider is the provider block of a configuration that reaches the emulator.
func awsProvider() string {
	return fmt.Sprintf(`
provider "stowage" {
  aws_region       = "us-east-1"
  aws_endpoint_url = %q
}
`, access.emulator.URL)
}
