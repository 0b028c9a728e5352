package nodeboot_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/stowage-dev/stowage/internal/nodeboot"
)

// vector is one of nodeadm's end-to-end cases: its input and the kubelet
// configuration (base, and drop-in when nodeadm writes one) it expects.
type vector struct {
	name, input, base, dropIn string
	instanceType              string
}

// vectors lists every case in testdata/vectors, scenarios included; a case
// added there without an input or an expected configuration fails.
func vectors(t *testing.T) []vector {
	t.Helper()
	var out []vector
	err := filepath.WalkDir("testdata/vectors", func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		inputs, _ := filepath.Glob(filepath.Join(path, "config*.yaml"))
		if len(inputs) == 0 {
			return nil
		}
		v := vector{name: strings.TrimPrefix(path, "testdata/vectors/"), input: inputs[0], instanceType: "m4.xlarge"}
		for _, pair := range [][3]string{{"expected-kubelet-config.json", "expected-kubelet-config-drop-in.json"}, {"expected.json", "expected-dropin.json"}} {
			if _, err := os.Stat(filepath.Join(path, pair[0])); err == nil {
				v.base, v.dropIn = filepath.Join(path, pair[0]), filepath.Join(path, pair[1])
			}
		}
		if v.base == "" {
			t.Errorf("case %s has an input and no expected kubelet configuration", v.name)
		}
		if v.name == "kubelet-config-new-instance-type" {
			v.instanceType = "mock-type.large" // the case's mock IMDS: a type no table knows
		}
		out = append(out, v)
		return nil
	})
	if err != nil || len(out) < 6 {
		t.Fatalf("reading the cases: %v (%d found)", err, len(out))
	}
	return out
}

func readJSON(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fields are the settings of a kubelet configuration that shape the Node.
func fields(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var all map[string]any
	if err := json.Unmarshal(raw, &all); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	out := map[string]any{}
	for _, k := range []string{"maxPods", "kubeReserved", "systemReserved", "evictionHard", "clusterDNS"} {
		if v, ok := all[k]; ok {
			out[k] = v
		}
	}
	return out
}

// TestNodeadmsEndToEndCases: for each of nodeadm's cases, on its m4.xlarge
// (or unknown type) and 2-CPU host, the base configuration and the
// configuration the kubelet runs with (base and drop-in merged as the kubelet
// merges them) hold nodeadm's maxPods, kubeReserved, systemReserved,
// evictionHard and clusterDNS.
func TestNodeadmsEndToEndCases(t *testing.T) {
	host := nodeboot.Host{InstanceID: "i-1234567890abcdef0", Zone: "us-west-2f", CPUs: 2}
	for _, v := range vectors(t) {
		t.Run(v.name, func(t *testing.T) {
			raw, err := os.ReadFile(v.input)
			if err != nil {
				t.Fatal(err)
			}
			ud, err := nodeboot.Read(nodeboot.AL2023, raw)
			if err != nil {
				t.Fatal(err)
			}
			h := host
			h.InstanceType = v.instanceType
			k, err := ud.Kubelet(h)
			if err != nil {
				t.Fatal(err)
			}
			wantBase := readJSON(t, v.base)
			want := wantBase
			if dropIn := readJSON(t, v.dropIn); dropIn != nil {
				if want, err = jsonpatch.MergePatch(wantBase, dropIn); err != nil {
					t.Fatal(err)
				}
			}
			gotBase, _ := json.Marshal(k.Base)
			if g, w := fields(t, gotBase), fields(t, wantBase); !reflect.DeepEqual(g, w) {
				t.Errorf("base config\n got %v\nwant %v", g, w)
			}
			got, _ := json.Marshal(k.Config)
			if g, w := fields(t, got), fields(t, want); !reflect.DeepEqual(g, w) {
				t.Errorf("the kubelet's config\n got %v\nwant %v", g, w)
			}
		})
	}
}
