package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stowage-dev/stowage/internal/nodeboot"
	"github.com/stowage-dev/stowage/internal/userdatacheck"
)

var clusterFlags = []string{"--cluster-name=prod", "--cluster-endpoint=https://ABCD.gr7.us-east-1.eks.amazonaws.com", "--cluster-ca-bundle=Q0E="}

// tomllib parses TOML with Python's own parser (tomllib, Python 3.11) and
// returns the document as JSON decodes it.
func tomllib(t *testing.T, doc string) map[string]any {
	t.Helper()
	cmd := exec.Command("python3", "-c", "import json, sys, tomllib; json.dump(tomllib.loads(sys.stdin.read()), sys.stdout)")
	cmd.Stdin = strings.NewReader(doc)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		if _, lookErr := exec.LookPath("python3"); lookErr != nil {
			t.Fatalf("this test needs python3 3.11 or later, whose tomllib judges the TOML: install it (apt-get install python3)")
		}
		t.Fatalf("Python's tomllib refuses the TOML: %v: %s\n%s", err, errOut.String(), doc)
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRenderBottlerocketIsTOMLPythonReads: Karpenter's own Bottlerocket
// example ([settings.kubernetes] kube-api-qps = 30), converted, renders to
// TOML that Python's tomllib parses, holding the user's value and Stowage's
// cluster name, and the cluster DNS of --cluster-cidr.
func TestRenderBottlerocketIsTOMLPythonReads(t *testing.T) {
	code, stdout, stderr := stowage(t, append([]string{"render", "user-data", "--manifests", upstream + "br-custom-userdata.yaml",
		"--nodepool", "default", "--cluster-cidr=10.100.0.0/16"}, clusterFlags...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	k := tomllib(t, stdout)["settings"].(map[string]any)["kubernetes"].(map[string]any)
	if k["kube-api-qps"] != float64(30) || k["cluster-name"] != "prod" || k["cluster-dns-ip"] != "10.100.0.10" ||
		k["node-labels"].(map[string]any)["stowage.dev/nodepool"] != "default" {
		t.Errorf("settings.kubernetes = %v", k)
	}
}

// TestRenderAL2023IsANodeConfigWithTheCIDR: Karpenter's AL2023 example, with
// --cluster-cidr 10.100.0.0/16, renders a MIME message whose NodeConfigs
// nodeadm's schema accepts, the user's kept and Stowage's carrying that CIDR.
func TestRenderAL2023IsANodeConfigWithTheCIDR(t *testing.T) {
	code, stdout, stderr := stowage(t, append([]string{"render", "user-data", "--manifests", upstream + "al2023-custom-userdata.yaml",
		"--nodeclass", "al2023", "--cluster-cidr=10.100.0.0/16"}, clusterFlags...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	ud, err := userdatacheck.Check(nodeboot.AL2023, base64.StdEncoding.EncodeToString([]byte(stdout)))
	if err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if c := ud.NodeConfig.Spec; c.Cluster.CIDR != "10.100.0.0/16" || c.Cluster.Name != "prod" || c.Instance.LocalStorage.Strategy != "Mount" ||
		len(ud.Documents) != 2 || len(ud.Scripts) != 1 {
		t.Errorf("merged NodeConfig %+v from %d documents and %d scripts", c, len(ud.Documents), len(ud.Scripts))
	}
}

// TestRenderRefusesBadInput names the flag or the file, line and field.
func TestRenderRefusesBadInput(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: stowage.dev/v1alpha1\nkind: NodeClass\nmetadata: {name: x}\nspec:\n  amiSelectorTerms: [{alias: al2023@latest}]\n  userDta: hi\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"user-data", "--manifests", bad}, exitBadArgs, "--cluster-name: required"},
		{append([]string{"user-data", "--manifests", bad, "--cluster-cidr=10.100.0.0"}, clusterFlags...), exitBadArgs, "--cluster-cidr: \"10.100.0.0\" is not a CIDR"},
		{append([]string{"user-data", "--manifests", bad}, clusterFlags...), exitFailed, bad + ":6"},
		{append([]string{"user-data", "--manifests", upstream + "al2023-custom-userdata.yaml", "--nodeclass", "nope"}, clusterFlags...), exitFailed, `no NodeClass "nope"; the file has al2023`},
		{append([]string{"user-data", "--manifests", upstream + "al2023-custom-userdata.yaml"}, clusterFlags...), exitFailed, "--cluster-cidr and --cluster-ca-bundle: nodeclass al2023's nodes run nodeadm"},
		{[]string{"user-date"}, exitBadArgs, "usage: stowage render user-data"},
	} {
		var out, errOut bytes.Buffer
		if code := runRender(tc.args, &out, &errOut); code != tc.code || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d saying %q", tc.args, code, errOut.String(), tc.code, tc.want)
		}
	}
}
