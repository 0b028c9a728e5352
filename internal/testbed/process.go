package testbed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/deploy"
)

// Issuer is the bed's service-account token issuer (testenv's
// --service-account-issuer), as an EKS cluster's OIDC issuer.
const Issuer = "https://kubernetes.default.svc.cluster.local"

// TrustIssuer registers the bed's service-account issuer as an IAM OIDC
// provider of the emulator, with the API server's signing keys, as
// `eksctl utils associate-iam-oidc-provider` does for a cluster; it returns
// the provider's ARN, for IRSA trust policies.
func (b *Bed) TrustIssuer(ctx context.Context) (string, error) {
	rc, err := rest.HTTPClientFor(b.ControlPlane.Config)
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.ControlPlane.APIServerURL+"/openid/v1/jwks", nil)
	if err != nil {
		return "", err
	}
	resp, err := rc.Do(req)
	if err != nil {
		return "", fmt.Errorf("reading the issuer's keys: %w", err)
	}
	defer resp.Body.Close()
	jwks, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("reading the issuer's keys: %s %s %v", resp.Status, jwks, err)
	}
	return b.Emulator.AddOIDCProvider(Issuer, jwks)
}

// ControllerProcess is `stowage run` as a process of the bed, or as a
// container under runc.
type ControllerProcess struct {
	// LogPath is the process's log.
	LogPath string
	// ContainerID is runc's name of the container, and RootFS the image's
	// files it runs on; empty for a host process.
	ContainerID, RootFS string
	cmd                 *exec.Cmd
	kill                func() // ends the process at once
	done                chan struct{}
	err                 error

	runc, runcState string
}

// ProcessOptions say where the process finds AWS.
type ProcessOptions struct {
	// Binary is a stowage binary built from this tree.
	Binary string
	// Dir holds the process's kubeconfig, token and log.
	Dir string
	// AWSEndpoint and AWSCABundle (a PEM file) reach the emulator, over TLS.
	AWSEndpoint, AWSCABundle string
	// MetricsAddr and HealthAddr override the Deployment's, which a pod owns alone.
	MetricsAddr, HealthAddr string
	// Namespace is the Deployment's; deploy.Namespace when empty.
	Namespace string
	// Container runs the Deployment's image (pulled by its digest) under
	// runc instead of Binary, as the kubelet would run the pod's container.
	Container bool
}

// RunController runs the controller as the Deployment in the cluster
// describes it (its image's entrypoint is the stowage binary): its args and
// environment, as its service account (a token from the TokenRequest API,
// as the kubelet mounts one), with the IRSA variables EKS's pod identity
// webhook injects for the role the service account is annotated with. What
// the controller may do is exactly what the cluster's RBAC and that role's
// IAM policy allow.
func (b *Bed) RunController(ctx context.Context, o ProcessOptions) (*ControllerProcess, error) {
	if o.Namespace == "" {
		o.Namespace = deploy.Namespace
	}
	var d appsv1.Deployment
	if err := b.Admin.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: deploy.Name}, &d); err != nil {
		return nil, fmt.Errorf("reading the controller's Deployment: %w", err)
	}
	var sa corev1.ServiceAccount
	if err := b.Admin.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: d.Spec.Template.Spec.ServiceAccountName}, &sa); err != nil {
		return nil, fmt.Errorf("reading the controller's service account: %w", err)
	}
	var files podFiles = hostFiles{dir: o.Dir, b: b}
	container := &containerFiles{volumes: filepath.Join(o.Dir, "volumes"), mounts: map[string]string{}, b: b}
	if o.Container {
		files = container
	}
	env, err := b.podEnvironment(ctx, d, sa, o, files)
	if err != nil {
		return nil, err
	}
	c := d.Spec.Template.Spec.Containers[0]
	args := append(append([]string(nil), c.Args...), "--metrics-bind-address="+orZero(o.MetricsAddr), "--health-probe-bind-address="+orZero(o.HealthAddr))
	if o.Container {
		return b.runContainer(ctx, d, args, env, container, o)
	}
	return startProcess(o.Binary, args, env, filepath.Join(o.Dir, "stowage.log"))
}

func orZero(addr string) string {
	if addr == "" {
		return "0"
	}
	return addr
}

// podEnvironment is the container's environment as the kubelet and the pod
// identity webhook make it, with the bed's own endpoints; files places the
// projected tokens where the process finds them.
func (b *Bed) podEnvironment(ctx context.Context, d appsv1.Deployment, sa corev1.ServiceAccount, o ProcessOptions, files podFiles) ([]string, error) {
	token, err := b.serviceAccountToken(ctx, sa.Namespace, sa.Name, nil)
	if err != nil {
		return nil, err
	}
	env, err := files.apiServer(token, sa.Namespace)
	if err != nil {
		return nil, err
	}
	caData, err := os.ReadFile(o.AWSCABundle)
	if err != nil {
		return nil, fmt.Errorf("reading the emulator's CA bundle: %w", err)
	}
	caBundle, err := files.place(bedCABundle, caData)
	if err != nil {
		return nil, err
	}
	env = append(env,
		// The web identity provider's STS client is made before the general endpoint is read.
		"AWS_ENDPOINT_URL="+o.AWSEndpoint, "AWS_ENDPOINT_URL_STS="+o.AWSEndpoint, "AWS_CA_BUNDLE="+caBundle, "AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE="+os.DevNull, "AWS_SHARED_CREDENTIALS_FILE="+os.DevNull)
	if role := sa.Annotations["eks.amazonaws.com/role-arn"]; role != "" {
		idToken, err := b.serviceAccountToken(ctx, sa.Namespace, sa.Name, []string{"sts.amazonaws.com"})
		if err != nil {
			return nil, err
		}
		file, err := files.place(webIdentityToken, []byte(idToken))
		if err != nil {
			return nil, err
		}
		env = append(env, "AWS_ROLE_ARN="+role, "AWS_WEB_IDENTITY_TOKEN_FILE="+file, "AWS_ROLE_SESSION_NAME=stowage-controller")
	}
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		v := e.Value
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace" {
			v = d.Namespace
		}
		env = append(env, e.Name+"="+v)
	}
	return env, nil
}

// serviceAccountToken asks the TokenRequest API for a token of the service
// account, for the audiences (the API server's when none), as the kubelet
// does for a pod's projected token.
func (b *Bed) serviceAccountToken(ctx context.Context, namespace, name string, audiences []string) (string, error) {
	cs, err := kubernetes.NewForConfig(b.ControlPlane.Config)
	if err != nil {
		return "", err
	}
	hour := int64(time.Hour / time.Second)
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{Audiences: audiences, ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("requesting a token of service account %s: %w", name, err)
	}
	return tr.Status.Token, nil
}

func writeTokenKubeconfig(path string, cfg *rest.Config, token string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["bed"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["stowage"] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["bed"] = &clientcmdapi.Context{Cluster: "bed", AuthInfo: "stowage"}
	kc.CurrentContext = "bed"
	return clientcmd.WriteToFile(*kc, path)
}

// Stop ends the process (SIGTERM, then SIGKILL after 10 s) and returns how
// it ended: nil for a clean exit.
func (p *ControllerProcess) Stop() error {
	select {
	case <-p.done:
		return p.err
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.kill()
		<-p.done
	}
	var exit *exec.ExitError
	if errors.As(p.err, &exit) && exit.Sys().(syscall.WaitStatus).Signaled() {
		return fmt.Errorf("the controller had to be killed")
	}
	return p.err
}

// Err reports an early exit, with the end of the log.
func (p *ControllerProcess) Err() error {
	select {
	case <-p.done:
		log, _ := os.ReadFile(p.LogPath)
		lines := strings.Split(strings.TrimSpace(string(log)), "\n")
		return fmt.Errorf("the controller exited (%v): %s", p.err, strings.Join(lines[max(0, len(lines)-20):], "\n"))
	default:
		return nil
	}
}
