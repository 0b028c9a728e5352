package metricsref_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/hashicorp/go-hclog"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/stowage-dev/stowage/controller/apis/crds"

	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/cloudprovider/fake"
	"github.com/stowage-dev/stowage/controller/operator"
	"github.com/stowage-dev/stowage/controller/options"
	"github.com/stowage-dev/stowage/internal/metricsref"
	"github.com/stowage-dev/stowage/internal/testenv"
)

const page = "../../docs/guides/metrics.md"

var documented = regexp.MustCompile("(?m)^\\| `(stowage_[a-z0-9_]+)` \\|")

// TestReferenceDocumentsEveryMetric fails when docs/guides/metrics.md is not
// what the code's registries give: naming each metric registered but not
// documented, and each documented but gone.
func TestReferenceDocumentsEveryMetric(t *testing.T) {
	metrics, err := metricsref.Collect()
	if err != nil {
		t.Fatal(err)
	}
	if len(metrics) < 20 {
		t.Fatalf("only %d stowage_ metrics found: the controllers' metrics are not registered", len(metrics))
	}
	var want bytes.Buffer
	if err := metricsref.Render(&want, metrics); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var inDoc []string
	for _, m := range documented.FindAllStringSubmatch(string(got), -1) {
		inDoc = append(inDoc, m[1])
	}
	for _, m := range metrics {
		if !slices.Contains(inDoc, m.Name) {
			t.Errorf("%s is registered but not documented in %s", m.Name, page)
		}
	}
	for _, name := range inDoc {
		if !slices.ContainsFunc(metrics, func(m metricsref.Metric) bool { return m.Name == name }) {
			t.Errorf("%s is documented in %s but no longer registered", name, page)
		}
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("%s is stale (types, labels or help changed): run make docs and commit", page)
	}
}

// TestKarpenterNamesAreOfRegisteredMetrics fails when the Karpenter mapping
// names a Stowage metric that does not exist.
func TestKarpenterNamesAreOfRegisteredMetrics(t *testing.T) {
	metrics, err := metricsref.Collect()
	if err != nil {
		t.Fatal(err)
	}
	for name := range metricsref.KarpenterNames {
		if !slices.ContainsFunc(metrics, func(m metricsref.Metric) bool { return m.Name == name }) {
			t.Errorf("KarpenterNames maps %s, which is not registered", name)
		}
	}
}

// TestAStartedOperatorRegistersNothingMore builds `stowage run`'s operator on
// a real kube-apiserver and wants every stowage_ metric in controller-runtime's
// registry afterwards to be one Collect finds without an operator, so that a
// metric registered in a constructor cannot escape the reference.
func TestAStartedOperatorRegistersNothingMore(t *testing.T) {
	before, err := metricsref.Collect()
	if err != nil {
		t.Fatal(err)
	}
	cp := testenv.Start(t, testenv.Options{})
	defs, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := envtest.InstallCRDs(cp.Config, envtest.CRDInstallOptions{CRDs: defs}); err != nil {
		t.Fatalf("installing the CRDs: %v", err)
	}
	o, err := options.Parse([]string{"--cluster-name=test", "--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--leader-election-namespace=default"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	newCloud := func(manager.Manager) (cloudprovider.CloudProvider, error) { return fake.New(), nil }
	if _, err := operator.New(context.Background(), cp.Config, o, newCloud, hclog.NewNullLogger()); err != nil {
		t.Fatal(err)
	}
	after, err := metricsref.Collect()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range after {
		if !slices.ContainsFunc(before, func(b metricsref.Metric) bool { return b.Name == m.Name }) {
			t.Errorf("%s is registered when the operator is built, and Collect misses it without one: register it at package init, or make Collect build it", m.Name)
		}
	}
	if len(after) != len(before) {
		t.Errorf("%d metrics after building the operator, %d before", len(after), len(before))
	}
}
