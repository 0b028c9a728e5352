package testbed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/internal/testenv"
)

// Where the kubelet and EKS's pod identity webhook project a pod's tokens.
const (
	serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"
	webIdentityToken  = "/var/run/secrets/eks.amazonaws.com/serviceaccount/token"
	// bedCABundle is where the container finds the emulator's CA (AWS_CA_BUNDLE).
	bedCABundle = "/var/run/stowage-bed/aws-ca-bundle.pem"
)

// podFiles places the files the kubelet projects into the pod and says
// where the process finds each, and how it reaches the API server.
type podFiles interface {
	// place writes data as the file at path in the pod, returning the
	// path the process reads it at.
	place(path string, data []byte) (string, error)
	// apiServer is the environment that reaches the API server with the
	// service account's token.
	apiServer(token, namespace string) ([]string, error)
}

// hostFiles serve a process on the host: files in its folder, a kubeconfig.
type hostFiles struct {
	dir string
	b   *Bed
}

func (h hostFiles) place(path string, data []byte) (string, error) {
	file := filepath.Join(h.dir, strings.ReplaceAll(strings.Trim(path, "/"), "/", "_"))
	return file, os.WriteFile(file, data, 0o600)
}

func (h hostFiles) apiServer(token, _ string) ([]string, error) {
	kubeconfig := filepath.Join(h.dir, "kubeconfig")
	if err := writeTokenKubeconfig(kubeconfig, h.b.ControlPlane.Config, token); err != nil {
		return nil, err
	}
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + h.dir, "KUBECONFIG=" + kubeconfig}, nil
}

// containerFiles serve a container: each file's folder is a read-only bind
// mount, as a projected volume is; the API server is reached in-cluster.
type containerFiles struct {
	volumes string            // host folder holding the volumes
	mounts  map[string]string // folder in the container -> on the host
	b       *Bed
}

func (c *containerFiles) place(path string, data []byte) (string, error) {
	dir := filepath.Dir(path)
	host := filepath.Join(c.volumes, dir)
	if err := os.MkdirAll(host, 0o755); err != nil {
		return "", err
	}
	c.mounts[dir] = host
	// Readable by the container's user, as the kubelet's 0644 default mode.
	return path, os.WriteFile(filepath.Join(host, filepath.Base(path)), data, 0o644) //nolint:gosec // a projected volume
}

// apiServer is what the kubelet gives every pod: the service account's
// token, CA and namespace, and KUBERNETES_SERVICE_HOST and _PORT, here the
// bed's API server on loopback (its certificate has 127.0.0.1).
func (c *containerFiles) apiServer(token, namespace string) ([]string, error) {
	u, err := url.Parse(c.b.ControlPlane.APIServerURL)
	if err != nil {
		return nil, err
	}
	for name, data := range map[string][]byte{"token": []byte(token), "ca.crt": c.b.ControlPlane.Config.CAData,
		"namespace": []byte(namespace)} {
		if _, err := c.place(serviceAccountDir+"/"+name, data); err != nil {
			return nil, err
		}
	}
	return []string{"KUBERNETES_SERVICE_HOST=" + u.Hostname(), "KUBERNETES_SERVICE_PORT=" + u.Port()}, nil
}

// imageConfig is the part of an OCI image config a runtime reads.
type imageConfig struct {
	Config struct {
		User                 string
		Entrypoint, Cmd, Env []string
		WorkingDir           string
		Labels               map[string]string
	} `json:"config"`
}

// pull fetches ref (which must name a digest, as a pinned Deployment does)
// for this machine's architecture with go-containerregistry's crane, and
// unpacks its layers into rootfs.
func pull(ctx context.Context, crane, ref, rootfs string) (imageConfig, error) {
	var cfg imageConfig
	if !strings.Contains(ref, "@sha256:") {
		return cfg, fmt.Errorf("the Deployment's image %s is not pinned by digest", ref)
	}
	platform := "linux/" + runtime.GOARCH
	out, err := exec.CommandContext(ctx, crane, "config", "--platform", platform, ref).Output() //nolint:gosec // the test's registry
	if err != nil {
		return cfg, fmt.Errorf("crane config %s: %w", ref, stderrOf(err))
	}
	if err := json.Unmarshal(out, &cfg); err != nil {
		return cfg, fmt.Errorf("reading the config of %s: %w", ref, err)
	}
	export := exec.CommandContext(ctx, crane, "export", "--platform", platform, ref, "-") //nolint:gosec // the test's registry
	stdout, err := export.StdoutPipe()
	if err != nil {
		return cfg, err
	}
	var stderr strings.Builder
	export.Stderr = &stderr
	if err := export.Start(); err != nil {
		return cfg, err
	}
	untarErr := untar(stdout, rootfs)
	if err := errors.Join(export.Wait(), untarErr); err != nil {
		return cfg, fmt.Errorf("unpacking %s: %w %s", ref, err, stderr.String())
	}
	return cfg, nil
}

func stderrOf(err error) error {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return fmt.Errorf("%w: %s", err, exit.Stderr)
	}
	return err
}

// runContainer pulls the Deployment's image and runs its container under
// runc as the kubelet would: the image's entrypoint with the container's
// args, the pod's user and groups, its security context (read-only root,
// no capabilities, no privilege escalation), the host's network namespace
// (as hostNetwork; loopback reaches the bed) and the projected files.
func (b *Bed) runContainer(ctx context.Context, d appsv1.Deployment, args, env []string, files *containerFiles, o ProcessOptions) (*ControllerProcess, error) {
	bin, err := testenv.Assets(testenv.Crane, testenv.Runc)
	if err != nil {
		return nil, err
	}
	// Rootless runc maps the caller's uid alone: it could not run the
	// container as uid 65532 with the image's root-owned files.
	if os.Geteuid() != 0 {
		return nil, errors.New("running the image under runc needs root (as the kubelet does); run the test as root")
	}
	c := d.Spec.Template.Spec.Containers[0]
	bundle := filepath.Join(o.Dir, "bundle")
	rootfs := filepath.Join(bundle, "rootfs")
	img, err := pull(ctx, filepath.Join(bin, testenv.Crane), c.Image, rootfs)
	if err != nil {
		return nil, err
	}
	runc := filepath.Join(bin, testenv.Runc)
	if out, err := exec.CommandContext(ctx, runc, "spec", "--bundle", bundle).CombinedOutput(); err != nil { //nolint:gosec // runc from make tools
		return nil, fmt.Errorf("runc spec: %w: %s", err, out)
	}
	id := "stowage-" + filepath.Base(o.Dir)
	spec := runcSpec{pod: d.Spec.Template.Spec, container: c, image: img, args: args, env: env, mounts: files.mounts, hostname: id}
	if err := spec.writeInto(filepath.Join(bundle, "config.json")); err != nil {
		return nil, err
	}
	state := filepath.Join(o.Dir, "runc-state")
	cmd := exec.Command(runc, "--root", state, "run", "--bundle", bundle, id) //nolint:gosec // runc from make tools
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	p, err := startCmd(cmd, filepath.Join(o.Dir, "stowage.log"))
	if err != nil {
		return nil, err
	}
	// runc forwards SIGTERM to the container; killing runc would leave it running.
	p.kill = func() { _ = exec.Command(runc, "--root", state, "kill", id, "KILL").Run() } //nolint:gosec // as above
	p.ContainerID, p.RootFS, p.runcState, p.runc = id, rootfs, state, runc
	return p, nil
}

// ContainerPID is the container's init process (the controller) on the
// host, as runc state reports it; Pid for a host process.
func (p *ControllerProcess) ContainerPID() (int, error) {
	if p.ContainerID == "" {
		return p.Pid(), nil
	}
	out, err := exec.Command(p.runc, "--root", p.runcState, "state", p.ContainerID).Output() //nolint:gosec // runc from make tools
	if err != nil {
		return 0, fmt.Errorf("runc state %s: %w", p.ContainerID, stderrOf(err))
	}
	var st struct {
		Pid    int    `json:"pid"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal(out, &st); err != nil {
		return 0, err
	}
	if st.Status != "running" {
		return 0, fmt.Errorf("container %s is %s", p.ContainerID, st.Status)
	}
	return st.Pid, nil
}

// userOf is the uid and gid the kubelet runs the container as: its
// security context's, else the pod's, else the image's.
func userOf(pod corev1.PodSpec, c corev1.Container, img imageConfig) (uid, gid int64, err error) {
	if _, err := fmt.Sscanf(img.Config.User, "%d:%d", &uid, &gid); err != nil && img.Config.User != "" {
		return 0, 0, fmt.Errorf("the image's user %q is not uid:gid", img.Config.User)
	}
	if psc := pod.SecurityContext; psc != nil {
		uid, gid = pick(psc.RunAsUser, uid), pick(psc.RunAsGroup, gid)
	}
	if sc := c.SecurityContext; sc != nil {
		uid, gid = pick(sc.RunAsUser, uid), pick(sc.RunAsGroup, gid)
	}
	nonRoot := (pod.SecurityContext != nil && pod.SecurityContext.RunAsNonRoot != nil && *pod.SecurityContext.RunAsNonRoot) ||
		(c.SecurityContext != nil && c.SecurityContext.RunAsNonRoot != nil && *c.SecurityContext.RunAsNonRoot)
	if nonRoot && uid == 0 {
		return 0, 0, errors.New("runAsNonRoot, but the container would run as uid 0: the kubelet refuses to start it")
	}
	return uid, gid, nil
}

func pick(v *int64, otherwise int64) int64 {
	if v != nil {
		return *v
	}
	return otherwise
}
