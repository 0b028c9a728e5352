package testenv_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/stowage-dev/stowage/internal/testenv"
)

// TestEnvtestStartsOnBuiltAssets checks that controller-runtime's envtest runs
// on the binaries EnvtestAssets points at.
func TestEnvtestStartsOnBuiltAssets(t *testing.T) {
	testenv.RequireAssets(t, testenv.Etcd, testenv.KubeAPIServer)
	assets, err := testenv.EnvtestAssets()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBEBUILDER_ASSETS", assets)
	env := &envtest.Environment{}
	started := time.Now()
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest: %v", err)
	}
	t.Logf("envtest started in %.1fs", time.Since(started).Seconds())
	defer stopEnvtest(t, env)

	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("building the client: %v", err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "envtest-smoke"}}
	if _, err := client.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a namespace: %v", err)
	}
}

func stopEnvtest(t *testing.T, env *envtest.Environment) {
	stopping := time.Now()
	if err := env.Stop(); err != nil {
		t.Errorf("stopping envtest: %v", err)
	}
	t.Logf("envtest stopped in %.1fs", time.Since(stopping).Seconds())
}
