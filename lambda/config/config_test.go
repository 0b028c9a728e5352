package config_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/internal/ekstoken"
	"github.com/stowage-dev/stowage/lambda/config"
	"github.com/stowage-dev/stowage/lambda/handler"
)

func env(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

var ca = base64.StdEncoding.EncodeToString([]byte("-----BEGIN CERTIFICATE-----\n"))

func TestBadEnvironmentsNameTheVariableAndTheFix(t *testing.T) {
	eks := map[string]string{config.EnvClusterName: "prod", config.EnvClusterEndpoint: "https://abc.eks.amazonaws.com", config.EnvClusterCA: ca}
	with := func(k, v string) map[string]string {
		out := map[string]string{}
		for key, val := range eks {
			out[key] = val
		}
		out[k] = v
		return out
	}
	for name, tc := range map[string]struct {
		vars map[string]string
		want string
	}{
		"nothing set":       {map[string]string{}, config.EnvClusterName + " is not set"},
		"no endpoint":       {with(config.EnvClusterEndpoint, ""), config.EnvClusterEndpoint + " is not set"},
		"plain http":        {with(config.EnvClusterEndpoint, "http://abc"), "https:// endpoint"},
		"ca not base64":     {with(config.EnvClusterCA, "%%%"), config.EnvClusterCA + " is not base64"},
		"both ways":         {with(config.EnvKubeconfig, "/tmp/kc"), "set only the EKS variables"},
		"bad rebalance":     {with(config.EnvRebalance, "replace"), config.EnvRebalance + `="replace": set it to ignore or mark`},
		"kubeconfig alone":  {map[string]string{config.EnvKubeconfig: "/tmp/kc"}, ""},
		"eks alone":         {eks, ""},
		"rebalance to mark": {with(config.EnvRebalance, "mark"), ""},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := config.FromEnv(env(tc.vars))
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	c, _ := config.FromEnv(env(eks))
	if c.Handler().Rebalance != handler.RebalanceIgnore || c.LogLevel != "info" {
		t.Errorf("defaults: %+v, want rebalance ignore and log level info", c)
	}
}

// TestEKSClientSendsAFreshEKSToken: the EKS configuration authenticates
// with a k8s-aws-v1. bearer token for the named cluster, and nothing else.
func TestEKSClientSendsAFreshEKSToken(t *testing.T) {
	var got []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	caPEM := pemOf(t, srv)
	c, err := config.FromEnv(env(map[string]string{config.EnvClusterName: "prod", config.EnvClusterEndpoint: srv.URL,
		config.EnvClusterCA: base64.StdEncoding.EncodeToString(caPEM)}))
	if err != nil {
		t.Fatal(err)
	}
	awsCfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDLAMBDA", "secret", "token")}
	rc, err := c.RESTConfig(context.Background(), awsCfg, clocktesting.NewFakeClock(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	if rc.BearerToken != "" || rc.CertData != nil || rc.Username != "" {
		t.Errorf("the client carries other credentials: %+v", rc)
	}
	hc, err := rest.HTTPClientFor(rc)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Get(srv.URL + "/api")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(got) != 1 || !strings.HasPrefix(got[0], "Bearer "+ekstoken.Prefix) {
		t.Fatalf("Authorization headers %q, want one EKS bearer token", got)
	}
	u, err := ekstoken.DecodeURL(strings.TrimPrefix(got[0], "Bearer "))
	if err != nil || !strings.Contains(u, "X-Amz-Credential=AKIDLAMBDA") || !strings.Contains(u, "X-Amz-Security-Token=token") {
		t.Errorf("token URL %q (%v), want one signed by the function's credentials", u, err)
	}
}

func TestKubeconfigIsReadForTests(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	doc := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: https://127.0.0.1:6443}\nusers:\n- name: u\n  user: {token: abc}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := config.FromEnv(env(map[string]string{config.EnvKubeconfig: path}))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := c.RESTConfig(context.Background(), aws.Config{}, clocktesting.NewFakeClock(time.Now()))
	if err != nil || rc.Host != "https://127.0.0.1:6443" || rc.BearerToken != "abc" {
		t.Fatalf("config %+v, %v; want the kubeconfig's", rc, err)
	}
}
