package charttest

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/kube"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	autoscalingcrd "github.com/stowage-dev/stowage/controller/apis/autoscaling/crd"
	"github.com/stowage-dev/stowage/internal/chartgen"
	"github.com/stowage-dev/stowage/internal/testenv"
)

var crdResource = apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")

// TestChartInstallsTheSharedCRDsOnlyWhereMissing installs the chart with
// helm's Go SDK on an API server alone (no controller runs: only the CRDs
// are looked at): on a cluster without the CapacityBuffer and
// ProvisioningRequest CRDs the install creates them, and helm's uninstall
// keeps them, as it keeps every CRD of crds/; on a cluster where Cluster
// Autoscaler installed them (here with a label of its own) the install
// leaves them untouched.
func TestChartInstallsTheSharedCRDsOnlyWhereMissing(t *testing.T) {
	ctx := context.Background()
	cp, err := testenv.StartControlPlane(ctx, testenv.Options{})
	if err != nil {
		t.Fatal(err) // a missing component names make tools
	}
	t.Cleanup(func() { _ = cp.Stop() })
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	cfg := bareHelmConfig(t, cp.KubeconfigPath)

	installChart(t, cfg, "first")
	for _, shared := range chartgen.SharedCRDs() {
		if _, err := dyn.Resource(crdResource).Get(ctx, shared.Name, metav1.GetOptions{}); err != nil {
			t.Fatalf("the install did not create the %s CRD: %v", shared.Kind, err)
		}
	}
	uninstall := action.NewUninstall(cfg)
	uninstall.WaitStrategy = kube.HookOnlyStrategy
	if _, err := uninstall.Run("first"); err != nil {
		t.Fatalf("helm uninstall: %v", err)
	}
	for _, shared := range chartgen.SharedCRDs() {
		if _, err := dyn.Resource(crdResource).Get(ctx, shared.Name, metav1.GetOptions{}); err != nil {
			t.Fatalf("helm uninstall removed the %s CRD, which helm keeps: %v", shared.Kind, err)
		}
		deleteCRD(t, dyn, shared.Name)
	}

	theirs, err := autoscalingcrd.Shared()
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range theirs {
		crd.Labels = map[string]string{"app.kubernetes.io/managed-by": "cluster-autoscaler"}
	}
	if _, err := envtest.InstallCRDs(cp.Config, envtest.CRDInstallOptions{CRDs: theirs}); err != nil {
		t.Fatalf("installing Cluster Autoscaler's CRDs: %v", err)
	}
	before := map[string]*unstructured.Unstructured{}
	for _, crd := range theirs {
		if before[crd.Name], err = dyn.Resource(crdResource).Get(ctx, crd.Name, metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	installChart(t, cfg, "second")
	for _, crd := range theirs {
		after, err := dyn.Resource(crdResource).Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// The API server bumps the resourceVersion for its own status writes:
		// a write of the install's would change the spec, the labels or the
		// field managers.
		was := before[crd.Name]
		if after.GetGeneration() != was.GetGeneration() || !equality.Semantic.DeepEqual(after.Object["spec"], was.Object["spec"]) ||
			after.GetLabels()["app.kubernetes.io/managed-by"] != "cluster-autoscaler" || !slices.Equal(managers(after), managers(was)) {
			t.Errorf("the install changed Cluster Autoscaler's %s: generation %d (was %d), labels %v, field managers %v (were %v)",
				crd.Name, after.GetGeneration(), was.GetGeneration(), after.GetLabels(), managers(after), managers(was))
		}
	}
}

// managers lists the field managers of an object and what each wrote.
func managers(u *unstructured.Unstructured) []string {
	var out []string
	for _, m := range u.GetManagedFields() {
		out = append(out, m.Manager+" "+string(m.Operation)+" "+m.Subresource)
	}
	return out
}

// bareHelmConfig reaches a control plane as its administrator, storing
// releases as Secrets in the chart's namespace.
func bareHelmConfig(t *testing.T, kubeconfig string) *action.Configuration {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	ns := namespace
	flags.KubeConfig, flags.Namespace = &kubeconfig, &ns
	cfg := action.NewConfiguration()
	if err := cfg.Init(flags, namespace, "secret"); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// installChart installs charts/stowage as release name, waiting for nothing
// but hooks: no kubelet runs the controller here.
func installChart(t *testing.T, cfg *action.Configuration, name string) {
	t.Helper()
	ch, err := loader.Load(filepath.Join("..", "..", chartgen.Dir))
	if err != nil {
		t.Fatal(err)
	}
	install := action.NewInstall(cfg)
	install.ReleaseName, install.Namespace, install.CreateNamespace = name, namespace, true
	install.WaitStrategy = kube.HookOnlyStrategy
	if _, err := install.RunWithContext(context.Background(), ch, map[string]any{"clusterName": "prod", "region": "us-east-1",
		"clusterEndpoint": "https://EXAMPLE0123456789.gr7.us-east-1.eks.amazonaws.com",
		"serviceAccount":  map[string]any{"roleArn": "arn:aws:iam::111122223333:role/StowageController-prod"}}); err != nil {
		t.Fatalf("helm install %s: %v", name, err)
	}
}

func deleteCRD(t *testing.T, dyn dynamic.Interface, name string) {
	t.Helper()
	ctx := context.Background()
	if err := dyn.Resource(crdResource).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := dyn.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("CRD %s is not gone: %v", name, err)
	}
}
