package provider_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stowage-dev/stowage/controller/apis/crds"
	"github.com/stowage-dev/stowage/internal/iamcheck"
	"github.com/stowage-dev/stowage/internal/testenv"
	"github.com/stowage-dev/stowage/provider/internal/kube"
	"github.com/stowage-dev/stowage/provider/internal/provider"
)

// bed is the package's one control plane: etcd, kube-apiserver and
// kube-controller-manager with Stowage's CRDs, reached by the provider
// through KUBE_CONFIG_PATH.
var bed struct {
	cp  *testenv.ControlPlane
	dyn dynamic.Interface
}

// providers runs the provider in the test process; terraform reaches it over gRPC.
var providers = map[string]func() (tfprotov6.ProviderServer, error){
	"stowage": provider.NewServer("test"),
}

// TestMain makes the acceptance tests run under a plain `go test`: it points
// terraform-plugin-testing at the terraform CLI that `make tools` builds
// (failing, not skipping, when it is missing) and starts the control plane.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctrllog.SetLogger(logr.Discard()) // envtest's client logs through controller-runtime
	bin, err := testenv.Assets(testenv.Terraform, testenv.Etcd, testenv.KubeAPIServer, testenv.KubeControllerManager)
	if err != nil {
		fmt.Fprintf(os.Stderr, "provider acceptance tests: %v\n", err)
		return 1
	}
	os.Setenv("TF_ACC", "1")
	os.Setenv("TF_ACC_TERRAFORM_PATH", filepath.Join(bin, testenv.Terraform))
	os.Setenv("CHECKPOINT_DISABLE", "1")
	os.Unsetenv("TF_CLI_CONFIG_FILE")
	os.Unsetenv("TF_ACC_TERRAFORM_VERSION")
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": accessKeyID, "AWS_SECRET_ACCESS_KEY": secretAccessKey,
		"AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull, "AWS_EC2_METADATA_DISABLED": "true"} {
		os.Setenv(k, v)
	}
	os.Unsetenv("AWS_PROFILE")
	dir, err := os.MkdirTemp("", "stowage-provider-acc-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	extra, err := accessFlags(dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "writing the access files: %v\n", err)
		return 1
	}
	defer func() { _ = access.webhook.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// kube-controller-manager finishes namespace deletions (stowage_controller's destroy waits for its namespace).
	cp, err := testenv.StartControlPlane(ctx, testenv.Options{BinDir: bin, ControllerManager: true,
		ExtraFlags: map[string][]string{testenv.KubeAPIServer: extra}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the control plane: %v\n", err)
		return 1
	}
	defer cp.Stop()
	if err := startEmulator(cp.APIServerURL, cp.Config.CAData, dir); err != nil {
		fmt.Fprintf(os.Stderr, "starting the emulator: %v\n", err)
		return 1
	}
	defer access.emulator.Close()
	defer access.sts.Close()
	defer func() {
		if stowagePath != "" {
			os.RemoveAll(filepath.Dir(stowagePath))
		}
	}()
	all, err := crds.CRDs()
	if err == nil {
		_, err = envtest.InstallCRDs(cp.Config, envtest.CRDInstallOptions{CRDs: all})
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "installing the CRDs: %v\n", err)
		return 1
	}
	bed.cp = cp
	if bed.dyn, err = dynamic.NewForConfig(cp.Config); err != nil {
		fmt.Fprintf(os.Stderr, "building a client: %v\n", err)
		return 1
	}
	os.Setenv("KUBE_CONFIG_PATH", cp.KubeconfigPath)
	return iamcheck.Main(m)
}

// defaultClass makes the NodeClass "default" the tests' pools name (a
// pool's plan fails on a class that exists nowhere), unless it exists; the
// stowage_controller tests remove the CRDs, and every object with them.
func defaultClass(t *testing.T) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "stowage.dev/v1alpha1", "kind": "NodeClass",
		"metadata": map[string]any{"name": "default"},
		"spec": map[string]any{"role": "StowageNodeRole-acc",
			"amiSelectorTerms":           []any{map[string]any{"alias": "al2023@latest"}},
			"subnetSelectorTerms":        []any{map[string]any{"tags": map[string]any{"stowage.dev/discovery": "acc"}}},
			"securityGroupSelectorTerms": []any{map[string]any{"tags": map[string]any{"stowage.dev/discovery": "acc"}}}}}}
	_, err := bed.dyn.Resource(kube.Resource("nodeclasses")).Create(context.Background(), obj, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating NodeClass default: %v", err)
	}
}
