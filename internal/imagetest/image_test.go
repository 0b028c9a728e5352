package imagetest

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/deploy"
	"github.com/stowage-dev/stowage/internal/testbed"
	"github.com/stowage-dev/stowage/internal/testenv"
	"github.com/stowage-dev/stowage/internal/tfbed"
	"github.com/stowage-dev/stowage/internal/tfcli"
)

// TestTheImageRunsAsTheDeploymentDescribes builds the controller's image as
// `make image` does (this machine's platform only), pushes it to a
// distribution registry on loopback with go-containerregistry, deploys it
// with stowage_controller pinned by the digest the build printed, pulls it
// back by that digest, unpacks it and runs it under runc as the kubelet would
// run the Deployment's container (uid 65532, read-only root, the host's
// network, the service account's and the IRSA token projected): it wins its
// lease, launches a node for a pending pod, and drains it when Terraform
// destroys everything. The provider built as make release ships it deploys
// that digest by default.
func TestTheImageRunsAsTheDeploymentDescribes(t *testing.T) {
	if _, err := testenv.Assets(testenv.Registry, testenv.Crane, testenv.Runc); err != nil {
		t.Fatal(err) // names make tools, which builds the registry and crane and installs runc
	}
	layout, digest, commit := makeImage(t)
	ref := push(t, layout, digest)
	e := start(t)
	ctx := context.Background()
	dir := tfcli.Merge(t, "testdata")
	v := e.Values()
	vars := tfbed.Flags(map[string]string{"aws_endpoint": v["aws_endpoint"], "cluster_endpoint": v["cluster_endpoint"],
		"cluster_ca": v["cluster_ca"], "oidc_provider_arn": v["oidc_provider_arn"]})
	e.CLI.MustRun(t, dir, "init", "-input=false")
	// A development build of the provider deploys :dev, and says so.
	if plan := tfcli.OneLine(e.CLI.MustRun(t, dir, append([]string{"plan", "-input=false"}, vars...)...)); !strings.Contains(plan, "Warning: Development build of the provider") ||
		!strings.Contains(plan, "ghcr.io/stowage-dev/stowage:dev") {
		t.Errorf("the plan of a development provider does not warn about the image it deploys:\n%s", plan)
	}
	checkReleasedProvider(t, e, vars, digest)
	vars = append(vars, "-var", "image="+ref)
	destroy := append([]string{"destroy", "-input=false", "-auto-approve"}, vars...)
	e.DestroyOnFailure(t, dir, destroy)
	e.CLI.MustRun(t, dir, append([]string{"apply", "-input=false", "-auto-approve"}, vars...)...)

	p, err := e.RunContainer(ctx, deploy.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			t.Logf("the container's log:\n%s", tfbed.LogTail(p, 60))
		}
		_ = p.Stop()
	}()
	checkRootFS(t, p.RootFS)
	checkConfinement(t, p)
	w := tfbed.Workload{Namespace: "shop", Name: "inflate", Replicas: 2, NodeSelector: map[string]string{v1alpha1.LabelNodePool: "general"},
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
	if err := e.Run(ctx, w); err != nil {
		t.Fatal(err)
	}
	var nodes []corev1.Node
	tfbed.Eventually(t, 4*time.Minute, func() error {
		if err := p.Err(); err != nil {
			return err
		}
		var err error
		nodes, err = e.Nodes(ctx, w)
		return err
	})
	t.Logf("%s, run under runc as %s, launched %d node(s) for the workload, first %s (%s)", ref, p.ContainerID, len(nodes),
		nodes[0].Name, nodes[0].Labels[corev1.LabelInstanceTypeStable])
	checkLease(t, e, p)
	checkStamp(t, p, commit)
	if err := e.Delete(ctx, w); err != nil {
		t.Error(err)
	}
	// The pool goes first, its node drained and terminated by the container.
	e.CLI.MustRun(t, dir, destroy...)
	if left, err := e.Leftovers(ctx); err != nil || len(left) > 0 {
		t.Errorf("the destroy left %v (%v)", left, err)
	}
}

// makeImage runs `make image` for this machine's platform into a
// temporary layout and returns it with the index digest it printed and the
// commit it stamped.
func makeImage(t *testing.T) (layout, digest, commit string) {
	t.Helper()
	commit = "unknown"
	if out, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
		commit = strings.TrimSpace(string(out))
	}
	layout = filepath.Join(t.TempDir(), "image")
	cmd := exec.Command("make", "-s", "image", "IMAGE_DIR="+layout, "IMAGE_PLATFORMS=linux/"+runtime.GOARCH)
	cmd.Dir = filepath.Join("..", "..")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make image: %v\n%s", err, stderr.String())
	}
	digest = strings.TrimSpace(string(out))
	if !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(digest) {
		t.Fatalf("make image printed %q, not the index's digest", out)
	}
	return layout, digest, commit
}

// push starts the registry and pushes the layout's index with crane; the
// registry must hold it under the digest the build printed.
func push(t *testing.T, layout, digest string) string {
	t.Helper()
	reg, err := testenv.StartRegistry(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Stop() })
	bin, _ := testenv.Assets(testenv.Crane)
	crane := filepath.Join(bin, testenv.Crane)
	tag := reg.Host + "/stowage-dev/stowage:dev"
	if out, err := exec.Command(crane, "push", layout, tag).CombinedOutput(); err != nil { //nolint:gosec // the test's registry
		t.Fatalf("crane push: %v\n%s", err, out)
	}
	out, err := exec.Command(crane, "digest", tag).Output() //nolint:gosec // as above
	if err != nil {
		t.Fatalf("crane digest: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != digest {
		t.Fatalf("the registry holds %s as %s, but make image built %s", tag, got, digest)
	}
	return reg.Host + "/stowage-dev/stowage@" + digest
}

func start(t *testing.T) *tfbed.Env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e, err := tfbed.Start(ctx, t.TempDir(), tfbed.Options{})
	if err != nil {
		t.Fatal(err) // a missing component names make tools
	}
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Errorf("stopping the bed: %v", err)
		}
	})
	return e
}

// checkRootFS reads the image as pulled: the static binary, the CA bundle
// and time zones, and no shell.
func checkRootFS(t *testing.T, root string) {
	t.Helper()
	f, err := elf.Open(filepath.Join(root, "stowage"))
	if err != nil {
		t.Fatalf("/stowage: %v", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("/stowage is dynamically linked (program header %v): build it with CGO_ENABLED=0", p.Type)
		}
	}
	for _, name := range []string{"bin/sh", "bin/bash", "bin/busybox", "usr/bin/sh"} {
		if _, err := os.Lstat(filepath.Join(root, name)); err == nil {
			t.Errorf("the image has /%s", name)
		}
	}
	for _, name := range []string{"etc/ssl/certs/ca-certificates.crt", "usr/share/zoneinfo/Europe/Berlin", "etc/passwd"} {
		if info, err := os.Stat(filepath.Join(root, name)); err != nil || info.Size() == 0 {
			t.Errorf("the image has no /%s (%v)", name, err)
		}
	}
}

// checkConfinement reads the running controller's process from /proc: its
// user, its read-only root, and the host's network namespace.
func checkConfinement(t *testing.T, p *testbed.ControllerProcess) {
	t.Helper()
	var pid int
	tfbed.Eventually(t, time.Minute, func() error {
		if err := p.Err(); err != nil {
			return err
		}
		var err error
		pid, err = p.ContainerPID()
		return err
	})
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^Uid:\s+65532\s+65532\s+65532\s+65532$`).Match(status) ||
		!regexp.MustCompile(`(?m)^CapEff:\s+0+$`).Match(status) || !regexp.MustCompile(`(?m)^NoNewPrivs:\s+1$`).Match(status) {
		t.Errorf("the controller does not run as uid 65532 without capabilities and privilege escalation:\n%s", status)
	}
	mounts, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^\S+ \S+ \S+ \S+ / ro[,\s]`).Match(mounts) {
		t.Errorf("the controller's root filesystem is not read-only:\n%s", mounts)
	}
	netns, err1 := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
	hostns, err2 := os.Readlink("/proc/self/ns/net")
	if err1 != nil || err2 != nil || netns != hostns {
		t.Errorf("the controller's network namespace is %s, the host's %s (%v %v)", netns, hostns, err1, err2)
	}
}

// checkLease: the leader is the container, whose hostname leads its identity.
func checkLease(t *testing.T, e *tfbed.Env, p *testbed.ControllerProcess) {
	t.Helper()
	var lease coordinationv1.Lease
	key := client.ObjectKey{Namespace: deploy.Namespace, Name: "stowage-leader-election"}
	if err := e.Bed.Admin.Get(context.Background(), key, &lease); err != nil {
		t.Fatal(err)
	}
	if h := lease.Spec.HolderIdentity; h == nil || !strings.HasPrefix(*h, p.ContainerID+"_") {
		t.Errorf("the lease is held by %v, not the container %s", h, p.ContainerID)
	} else {
		t.Logf("lease %s held by %s", key.Name, *h)
	}
}

// checkStamp: the image's binary says which commit make image built.
func checkStamp(t *testing.T, p *testbed.ControllerProcess, commit string) {
	t.Helper()
	log, err := os.ReadFile(p.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(log, []byte("\n")) {
		var entry map[string]any
		if json.Unmarshal(line, &entry) == nil && entry["@message"] == "starting" {
			if entry["version"] != "dev" || entry["commit"] != commit {
				t.Errorf("the controller says version %v commit %v, want dev and %s", entry["version"], entry["commit"], commit)
			}
			return
		}
	}
	t.Error("the controller's log has no starting line")
}
