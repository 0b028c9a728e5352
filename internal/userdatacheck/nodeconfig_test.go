package userdatacheck_test

import (
	"context"
	"encoding/base64"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/stowage-dev/stowage/internal/crdadmission"
	"github.com/stowage-dev/stowage/internal/nodeboot"
	"github.com/stowage-dev/stowage/internal/userdatacheck"
)

// nodeadmsOwnCase is a NodeConfig of nodeadm's mime-userdata-merge case:
// kubelet config values that are numbers and lists.
func nodeadmsOwnCase(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile("../nodeboot/testdata/vectors/mime-userdata-merge/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ud, err := nodeboot.Read(nodeboot.AL2023, raw)
	if err != nil || len(ud.Documents) != 2 {
		t.Fatalf("reading nodeadm's case: %v", err)
	}
	return ud.Documents[0]
}

// TestThePublishedSchemaRefusesNodeadmsOwnCases shows why Check relaxes one
// rule: controller-gen declares kubelet.config's values (RawExtension)
// `type: object`, so the schema as published refuses `maxPods: 58`, which
// nodeadm's own end-to-end case writes and nodeadm reads; Check accepts it.
func TestThePublishedSchemaRefusesNodeadmsOwnCases(t *testing.T) {
	doc := nodeadmsOwnCase(t)
	crd, err := userdatacheck.Published()
	if err != nil {
		t.Fatal(err)
	}
	a, err := crdadmission.New(crd)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(doc, &obj); err != nil {
		t.Fatal(err)
	}
	errs := a.Validate(context.Background(), obj)
	if !strings.Contains(errs.ToAggregate().Error(), "spec.kubelet.config.maxPods in body must be of type object") {
		t.Errorf("the published schema's verdict on nodeadm's own case: %v", errs)
	}
	if err := userdatacheck.CheckNodeConfig(doc); err != nil {
		t.Errorf("Check refuses nodeadm's own case: %v", err)
	}
}

// TestCheckNodeConfigFindsWhatNodeadmWouldNotRead: a field the schema does
// not declare (which nodeadm's decoder drops without a word), a wrong type,
// an enum value nodeadm does not know, a CA that is not base64 and another
// kind are each found.
func TestCheckNodeConfigFindsWhatNodeadmWouldNotRead(t *testing.T) {
	base := "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    name: c\n    apiServerEndpoint: https://api\n" +
		"    certificateAuthority: Q0E=\n    cidr: 10.100.0.0/16\n"
	if err := userdatacheck.CheckNodeConfig([]byte(base)); err != nil {
		t.Fatalf("a plain NodeConfig: %v", err)
	}
	for doc, want := range map[string]string{
		base + "  kubelet:\n    flagz: [--v=2]\n":                        "spec.kubelet.flagz",
		base + "  kubelet:\n    flags: --v=2\n":                          "spec.kubelet.flags",
		base + "  instance:\n    localStorage:\n      strategy: RAID5\n": "RAID5",
		strings.Replace(base, "Q0E=", "not base64!", 1):                  "spec.cluster.certificateAuthority",
		strings.Replace(base, "NodeConfig", "KubeletConfiguration", 1):   "not a node.eks.aws/v1alpha1 NodeConfig",
	} {
		if err := userdatacheck.CheckNodeConfig([]byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one naming %q for:\n%s", err, want, doc)
		}
	}
}

// TestCheckReadsBothFamilies: a Bottlerocket document that declares a
// table twice is refused, as TOML is; a MIME message's NodeConfigs are each
// checked.
func TestCheckReadsBothFamilies(t *testing.T) {
	enc := func(s string) string { return b64(t, s) }
	if _, err := userdatacheck.Check(nodeboot.Bottlerocket, enc("[settings.kubernetes]\na = 1\n[settings.kubernetes]\nb = 2\n")); err == nil {
		t.Error("a TOML document declaring a table twice passed")
	}
	mime := "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"B\"\n\n--B\nContent-Type: application/node.eks.aws\n\n" +
		"apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    name: c\n    apiServerEndpoint: https://api\n" +
		"    certificateAuthority: Q0E=\n    cidr: 10.100.0.0/16\n\n--B\nContent-Type: application/node.eks.aws\n\n" +
		"apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    maxPod: 3\n\n--B--\n"
	if _, err := userdatacheck.Check(nodeboot.AL2023, enc(mime)); err == nil || !strings.Contains(err.Error(), "NodeConfig document 2") {
		t.Errorf("the second document's unknown field: %v", err)
	}
}

func b64(t *testing.T, s string) string {
	t.Helper()
	return base64.StdEncoding.EncodeToString([]byte(s))
}
