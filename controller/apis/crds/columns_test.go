package crds_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// testDefaults creates minimal objects and checks that the API server fills in
// exactly what SetDefaults does.
func (s *server) testDefaults(t *testing.T) {
	for _, c := range []admissionCase{{name: "pool", base: basePool}, {name: "class", base: baseClass}} {
		t.Run(c.name, func(t *testing.T) {
			obj := mustBuild(t, c, "defaults-"+c.name)
			created, err := s.resource(obj).Create(t.Context(), obj, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got, want := defaultedSpecs(t, created, obj)
			if got != want {
				t.Errorf("the API server defaults the spec to\n%s\nSetDefaults to\n%s", got, want)
			}
		})
	}
}

// defaultedSpecs returns, as JSON, the spec of created and that of sent after SetDefaults.
func defaultedSpecs(t *testing.T, created, sent *unstructured.Unstructured) (got, want string) {
	t.Helper()
	switch sent.GetKind() {
	case "NodePool":
		g, w := decode[v1alpha1.NodePool](t, created), decode[v1alpha1.NodePool](t, sent)
		w.SetDefaults()
		return marshal(t, g.Spec), marshal(t, w.Spec)
	case "NodeClass":
		g, w := decode[v1alpha1.NodeClass](t, created), decode[v1alpha1.NodeClass](t, sent)
		w.SetDefaults()
		return marshal(t, g.Spec), marshal(t, w.Spec)
	}
	t.Fatalf("no defaults for %s", sent.GetKind())
	return "", ""
}

func decode[T any](t *testing.T, obj *unstructured.Unstructured) *T {
	t.Helper()
	data, err := obj.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	out := new(T)
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
	return out
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// printed is an object with a status, and the table kubectl must print for it.
type printed struct {
	base, patch string
	status      string
	// columns are the table's columns in order; wide marks those kubectl shows
	// only with -o wide. cells are the row's cells by column, Age left out.
	columns []string
	wide    []string
	cells   map[string]string
}

var readyStatus = `conditions: [{type: Ready, status: "True", reason: Ready, message: "", lastTransitionTime: "2026-01-01T00:00:00Z"}]`

var printedObjects = []printed{{
	base:    baseClaim,
	patch:   `{metadata: {labels: {node.kubernetes.io/instance-type: g5.12xlarge, stowage.dev/capacity-type: on-demand, topology.kubernetes.io/zone: us-east-1b, stowage.dev/nodepool: gpu-inference}}}`,
	status:  `{nodeName: ip-10-0-1-2.ec2.internal, providerID: "aws:///us-east-1b/i-0abc", ` + readyStatus + `}`,
	columns: []string{"Name", "Type", "Capacity", "Zone", "Node", "Ready", "Age", "ID", "NodePool"},
	wide:    []string{"ID", "NodePool"},
	cells: map[string]string{"Type": "g5.12xlarge", "Capacity": "on-demand", "Zone": "us-east-1b", "Node": "ip-10-0-1-2.ec2.internal",
		"Ready": "True", "ID": "aws:///us-east-1b/i-0abc", "NodePool": "gpu-inference"},
}, {
	base:    basePool,
	patch:   `{spec: {weight: 100, template: {spec: {nodeClassRef: {name: gpu}}}}}`,
	status:  `{resources: {nodes: "3", cpu: "48"}, ` + readyStatus + `}`,
	columns: []string{"Name", "NodeClass", "Nodes", "Ready", "Weight", "Age"},
	cells:   map[string]string{"NodeClass": "gpu", "Nodes": "3", "Ready": "True", "Weight": "100"},
}, {
	base:    baseClass,
	status:  `{` + readyStatus + `}`,
	columns: []string{"Name", "Ready", "Age"},
	cells:   map[string]string{"Ready": "True"},
}}

// tableAccept asks the API server for the table kubectl prints.
const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io"

// testPrinterColumns creates an object of each kind with a status and reads it back
// as the table kubectl prints, then runs kubectl itself when it is built.
func (s *server) testPrinterColumns(t *testing.T) {
	for _, p := range printedObjects {
		obj := s.createWithStatus(t, p)
		t.Run(obj.GetKind(), func(t *testing.T) {
			table := s.table(t, obj)
			var names, wide []string
			for _, c := range table.ColumnDefinitions {
				names = append(names, c.Name)
				if c.Priority > 0 {
					wide = append(wide, c.Name)
				}
			}
			if !slices.Equal(names, p.columns) || !slices.Equal(wide, p.wide) {
				t.Fatalf("columns %v (wide %v), want %v (wide %v)", names, wide, p.columns, p.wide)
			}
			if len(table.Rows) != 1 {
				t.Fatalf("%d rows, want 1", len(table.Rows))
			}
			for i, cell := range table.Rows[0].Cells {
				if want, ok := p.cells[names[i]]; ok && fmt.Sprint(cell) != want {
					t.Errorf("column %s shows %q, want %q", names[i], fmt.Sprint(cell), want)
				}
			}
		})
	}
	t.Run("kubectl", s.testKubectl)
}

func (s *server) createWithStatus(t *testing.T, p printed) *unstructured.Unstructured {
	t.Helper()
	obj := mustBuild(t, admissionCase{name: "printed", base: p.base, patch: p.patch}, "printed")
	created, err := s.resource(obj).Create(t.Context(), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var status map[string]any
	if err := json.Unmarshal(yamlToJSON(t, p.status), &status); err != nil {
		t.Fatal(err)
	}
	created.Object["status"] = status
	updated, err := s.resource(obj).UpdateStatus(t.Context(), created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("updating the status of %s: %v", obj.GetKind(), err)
	}
	return updated
}

func (s *server) table(t *testing.T, obj *unstructured.Unstructured) *metav1.Table {
	t.Helper()
	r := gvr(obj.GetKind())
	raw, err := s.apiext.ApiextensionsV1().RESTClient().Get().
		AbsPath("/apis", r.Group, r.Version, r.Resource, obj.GetName()).
		SetHeader("Accept", tableAccept).DoRaw(t.Context())
	if err != nil {
		t.Fatalf("getting %s as a table: %v", obj.GetKind(), err)
	}
	table := &metav1.Table{}
	if err := json.Unmarshal(raw, table); err != nil {
		t.Fatalf("decoding the table: %v\n%s", err, raw)
	}
	return table
}

// testKubectl checks the headers `kubectl get` prints and that the short names and
// the stowage category resolve.
func (s *server) testKubectl(t *testing.T) {
	dir := testenv.RequireAssets(t, testenv.Kubectl)
	headers := map[string]string{
		"nodeclaims":  "NAME TYPE CAPACITY ZONE NODE READY AGE",
		"nodepools":   "NAME NODECLASS NODES READY WEIGHT AGE",
		"nodeclasses": "NAME READY AGE",
		"nc":          "NAME TYPE CAPACITY ZONE NODE READY AGE",
		"np":          "NAME NODECLASS NODES READY WEIGHT AGE",
		"nclass":      "NAME READY AGE",
	}
	cache := t.TempDir()
	for resource, want := range headers {
		out := s.kubectl(t, dir, cache, "get", resource)
		if got := strings.Join(strings.Fields(strings.SplitN(out, "\n", 2)[0]), " "); got != want {
			t.Errorf("kubectl get %s prints %q, want %q", resource, got, want)
		}
	}
	out := s.kubectl(t, dir, cache, "get", "stowage", "-o", "name")
	for _, want := range []string{"nodeclaim.stowage.dev/printed", "nodepool.stowage.dev/printed", "nodeclass.stowage.dev/printed"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl get stowage does not list %s:\n%s", want, out)
		}
	}
}

func (s *server) kubectl(t *testing.T, dir, cache string, args ...string) string {
	t.Helper()
	args = append([]string{"--kubeconfig", s.cp.KubeconfigPath, "--cache-dir", cache}, args...)
	out, err := exec.CommandContext(t.Context(), dir+"/"+testenv.Kubectl, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func yamlToJSON(t *testing.T, y string) []byte {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatalf("parsing %s: %v", y, err)
	}
	return data
}
