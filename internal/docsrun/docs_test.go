package docsrun_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	autoscalingcrd "github.com/stowage-dev/stowage/controller/apis/autoscaling/crd"
	"github.com/stowage-dev/stowage/controller/logging"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/docsrun"
	"github.com/stowage-dev/stowage/internal/testbed"
	"github.com/stowage-dev/stowage/internal/testenv"
)

const root = "../.."

// installGuide's blocks install Stowage themselves: they run on a bed of
// their own (install_test.go).
const installGuide = "docs/guides/install.md"

// runnableBlocks reads every runnable block of the docs but the install guide's.
func runnableBlocks(t *testing.T) []docsrun.Block {
	t.Helper()
	var out []docsrun.Block
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") || strings.HasSuffix(path, installGuide) {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		blocks, err := docsrun.Blocks(strings.TrimPrefix(path, root+"/"), f)
		out = append(out, blocks...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 10 {
		t.Fatalf("only %d runnable blocks in docs/: the marker is %q", len(out), docsrun.Marker)
	}
	return out
}

// TestRunnableDocsBlocksRunOnTheBed starts the whole-system bed with the
// seed's pools and Stowage running, puts a web workload on it, and runs every
// runnable block of the docs in a shell (bash -euo pipefail) as a reader
// would: kubectl and a stowage built from this tree on PATH, KUBECONFIG set,
// STOWAGE_METRICS at the controller's metrics address, the controller's logs
// in ./stowage.log and the repository's examples/ in the working folder. A
// block passes when it exits 0.
func TestRunnableDocsBlocksRunOnTheBed(t *testing.T) {
	blocks := runnableBlocks(t)
	bin := testenv.RequireAssets(t, append(testenv.BedComponents, testenv.Kubectl)...)
	work, tools := t.TempDir(), t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(tools, "stowage"), "github.com/stowage-dev/stowage/controller/cmd/stowage")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building stowage: %v\n%s", err, out)
	}
	examples, err := filepath.Abs(filepath.Join(root, "examples"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(examples, filepath.Join(work, "examples")); err != nil {
		t.Fatal(err)
	}
	metrics := startBed(t, bin, work)
	env := append(os.Environ(), "PATH="+tools+":"+bin+":"+os.Getenv("PATH"), "STOWAGE_METRICS=http://"+metrics)
	for _, b := range blocks {
		t.Run(b.File+":"+strconv.Itoa(b.Line), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", b.Script)
			cmd.Dir, cmd.Env = work, env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("%s:%d: %v\n--- block\n%s--- output\n%s", b.File, b.Line, err, b.Script, out)
				return
			}
			t.Logf("%s:%d:\n%s", b.File, b.Line, out)
		})
	}
}

// startBed starts the bed and Stowage (logging to work/stowage.log), creates a
// web workload and waits until it runs on a node Stowage launched; it returns
// the controller's metrics address and sets KUBECONFIG for the blocks.
func startBed(t *testing.T, bin, work string) string {
	t.Helper()
	ctx := t.Context()
	bed, err := testbed.Start(ctx, testbed.Options{BinDir: bin, InstanceTypes: awsemu.BuiltinCatalogue()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := bed.CheckAllocatable(context.Background()); err != nil {
			t.Error(err)
		}
		if err := bed.Stop(); err != nil {
			t.Errorf("stopping the bed: %v", err)
		}
	})
	t.Setenv("KUBECONFIG", bed.ControlPlane.KubeconfigPath)
	// The CRDs stowage_controller installs where they are missing.
	shared, err := autoscalingcrd.Shared()
	if err == nil {
		_, err = envtest.InstallCRDs(bed.ControlPlane.Config, envtest.CRDInstallOptions{CRDs: shared})
	}
	if err != nil {
		t.Fatal(err)
	}
	pools, err := bed.SeedPools(filepath.Join(root, testbed.SeedFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := bed.Create(ctx, pools...); err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(work, "stowage.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logFile.Close() })
	addr, err := testbed.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	op, err := bed.NewOperator(ctx, testbed.OperatorOptions{Logger: logging.New("stowage", "info", "json", logFile),
		Flags: []string{"--metrics-bind-address=" + addr}})
	if err != nil {
		t.Fatal(err)
	}
	opCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Start(opCtx) }()
	t.Cleanup(func() { stop(); <-done })
	if err := bed.Create(ctx, webDeployment()); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, bed, 6)
	waitMetric(t, addr, "stowage_disruption_budgets_allowed_disruptions")
	return addr
}

// waitMetric polls the controller's metrics until a series of name is
// published: the runbook's blocks read a controller that has run its loops
// (a disruption round publishes the budgets once the state is synced).
func waitMetric(t *testing.T, addr, name string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil // not serving yet
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return err == nil && bytes.Contains(body, []byte("\n"+name+"{")), nil
	})
	if err != nil {
		t.Fatalf("the controller published no %s within 2 minutes: %v", name, err)
	}
}

func webDeployment() *appsv1.Deployment {
	labels := map[string]string{"app": "web"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](6), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				NodeSelector: map[string]string{"tier": "web"},
				Containers: []corev1.Container{{Name: "api", Image: "registry.example.com/web-api:1.42",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")}}}}}}},
	}
}

// waitRunning polls until n pods of the web workload run.
func waitRunning(t *testing.T, bed *testbed.Bed, n int) {
	t.Helper()
	running := 0
	err := wait.PollUntilContextTimeout(t.Context(), 500*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		if err := bed.Admin.List(ctx, &pods, client.InNamespace("default"), client.MatchingLabels{"app": "web"}); err != nil {
			return false, err
		}
		running = 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running >= n, nil
	})
	if err != nil {
		t.Fatalf("%d of %d web pods running: %v\n%s", running, n, err, bed.ControlPlane.LogTails())
	}
}
