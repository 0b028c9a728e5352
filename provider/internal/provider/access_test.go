package provider_test

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	authv1 "k8s.io/api/authentication/v1"

	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/ekstoken"
)

// The cluster name the EKS tests use, and the static token the host tests use.
const (
	eksCluster  = "acc-eks"
	staticToken = "acc-static-token-0123456789"
)

// access is what the provider's access modes reach the bed through: a static
// token the API server knows, an EKS token webhook that accepts tokens minted
// for eksCluster, and the AWS emulator that answers eks:DescribeCluster.
var access struct {
	emulator    *httptest.Server // over TLS: queue policies deny plain HTTP
	emu         *awsemu.Emulator
	webhook     *httptest.Server
	eksAccepted atomic.Int64 // EKS tokens the webhook accepted
}

// accessFlags starts the webhook and writes the files kube-apiserver needs
// for static tokens and token webhooks; dir outlives the control plane.
func accessFlags(dir string) ([]string, error) {
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(staticToken+",acc-admin,acc-admin,system:masters\n"), 0o600); err != nil {
		return nil, err
	}
	access.webhook = httptest.NewTLSServer(http.HandlerFunc(reviewEKSToken))
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: access.webhook.Certificate().Raw})
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: eks-webhook
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: apiserver
contexts:
- name: webhook
  context: {cluster: eks-webhook, user: apiserver}
current-context: webhook
`, access.webhook.URL, b64(caPEM))
	hook := filepath.Join(dir, "eks-webhook.kubeconfig")
	if err := os.WriteFile(hook, []byte(kubeconfig), 0o600); err != nil {
		return nil, err
	}
	return []string{"--token-auth-file=" + tokens, "--authentication-token-webhook-config-file=" + hook,
		"--authentication-token-webhook-version=v1"}, nil
}

// reviewEKSToken plays the EKS authenticator: it accepts a token that is a
// presigned sts:GetCallerIdentity whose signature covers the cluster-name
// header. It cannot replay the URL to learn the caller (the emulator has no
// STS), so it checks the token's shape only.
func reviewEKSToken(w http.ResponseWriter, r *http.Request) {
	var review authv1.TokenReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	review.Status = authv1.TokenReviewStatus{}
	if presigned, err := ekstoken.DecodeURL(review.Spec.Token); err == nil && signedFor(presigned) {
		access.eksAccepted.Add(1)
		review.Status = authv1.TokenReviewStatus{Authenticated: true,
			User: authv1.UserInfo{Username: "eks-admin", Groups: []string{"system:masters"}}}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(review)
}

func signedFor(presigned string) bool {
	u, err := url.Parse(presigned)
	if err != nil {
		return false
	}
	q := u.Query()
	return q.Get("Action") == "GetCallerIdentity" && strings.Contains(q.Get("X-Amz-SignedHeaders"), ekstoken.ClusterIDHeader) &&
		q.Get("X-Amz-Credential") != ""
}

// startEmulator serves the emulated AWS over TLS, with eks:DescribeCluster
// for eksCluster at the bed's API server, and makes the AWS SDK (the
// provider's, in this process) trust its certificate through AWS_CA_BUNDLE,
// written into dir.
func startEmulator(endpoint string, caPEM []byte, dir string) error {
	e := awsemu.New(awsemu.DefaultConfig())
	e.AddEKSCluster(awsemu.EKSCluster{Name: eksCluster, Endpoint: endpoint, CAData: caPEM, Version: "1.37"})
	access.emu, access.emulator = e, httptest.NewTLSServer(e.Handler())
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

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
