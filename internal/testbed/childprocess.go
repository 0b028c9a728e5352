package testbed

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// startProcess runs binary with args and env (nothing of this process's
// environment leaks in), its output going to logPath.
func startProcess(binary string, args, env []string, logPath string) (*ControllerProcess, error) {
	cmd := exec.Command(binary, args...) //nolint:gosec // the bed's own builds
	cmd.Env = env
	return startCmd(cmd, logPath)
}

// startCmd starts cmd, its output going to logPath.
func startCmd(cmd *exec.Cmd, logPath string) (*ControllerProcess, error) {
	p := &ControllerProcess{LogPath: logPath, cmd: cmd, done: make(chan struct{})}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	if err := p.cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", filepath.Base(cmd.Path), err)
	}
	p.kill = func() { _ = p.cmd.Process.Kill() }
	go func() { p.err = p.cmd.Wait(); _ = logFile.Close(); close(p.done) }()
	return p, nil
}

// Pid is the host process's id (runc's for a container, see ContainerPID),
// e.g. to read its CPU time and memory in /proc.
func (p *ControllerProcess) Pid() int { return p.cmd.Process.Pid }

// StowageProcessOptions say how RunStowage runs `stowage run`.
type StowageProcessOptions struct {
	// Binary is a stowage binary built from this tree.
	Binary string
	// Dir holds its kubeconfig and log.
	Dir string
	// Flags come after the bed's (Flags).
	Flags []string
}

// RunStowage runs `stowage run` as a process of the bed, with the bed's
// flags, acting as the manifests' service account (ServiceAccountUser,
// impersonated by the administrator's certificate, so that no token expires
// during a long run) and reaching the emulator with static keys, as its
// administrator. Unlike RunController it needs no Deployment in the cluster.
func (b *Bed) RunStowage(o StowageProcessOptions) (*ControllerProcess, error) {
	cfg := b.ControlPlane.Config
	kc := clientcmdapi.NewConfig()
	kc.Clusters["bed"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["stowage"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData,
		Impersonate: ServiceAccountUser.UserName, ImpersonateGroups: ServiceAccountUser.Groups}
	kc.Contexts["bed"] = &clientcmdapi.Context{Cluster: "bed", AuthInfo: "stowage"}
	kc.CurrentContext = "bed"
	kubeconfig := filepath.Join(o.Dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
		return nil, err
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + o.Dir, "KUBECONFIG=" + kubeconfig,
		"AWS_ENDPOINT_URL=" + b.EmulatorURL, "AWS_ACCESS_KEY_ID=AKIDEMULATOR", "AWS_SECRET_ACCESS_KEY=secret",
		"AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE=" + os.DevNull, "AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull}
	args := append(append([]string{"run"}, b.Flags()...), o.Flags...)
	return startProcess(o.Binary, args, env, filepath.Join(o.Dir, "stowage.log"))
}

// Kill ends the process at once (SIGKILL) and waits for it: for a harness
// that has measured what it wanted and need not wait for a graceful stop.
func (p *ControllerProcess) Kill() {
	select {
	case <-p.done:
		return
	default:
	}
	p.kill()
	<-p.done
}
