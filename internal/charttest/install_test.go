package charttest

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/kube"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/chartgen"
	"github.com/stowage-dev/stowage/internal/tfbed"
	"github.com/stowage-dev/stowage/internal/tfcli"
)

const namespace = "stowage"

// TestInstallUpgradeUninstallWithHelmsSDK installs the chart with helm's Go
// SDK on a bare bed, with the IAM the provider's data sources make; the
// controller, run as the installed Deployment describes (tfbed.Kubelet),
// wins its lease and launches a node for a pending pod. An upgrade that
// changes the log level and the replicas restarts it, keeping the node; an
// uninstall, after the pools and claims are deleted (their nodes drained
// and terminated by the controller), leaves no instance and no object of the
// release but the CRDs, which helm keeps.
func TestInstallUpgradeUninstallWithHelmsSDK(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	iam := tfcli.Merge(t, "testdata/iam")
	vars := []string{"-var", "oidc_provider_arn=" + e.Values()["oidc_provider_arn"]}
	e.CLI.MustRun(t, iam, "init", "-input=false")
	e.CLI.MustRun(t, iam, append([]string{"apply", "-input=false", "-auto-approve"}, vars...)...)
	t.Cleanup(func() {
		e.CLI.MustRun(t, iam, append([]string{"destroy", "-input=false", "-auto-approve"}, vars...)...)
	})
	roleARN := strings.TrimSpace(e.CLI.MustRun(t, iam, "output", "-raw", "controller_role_arn"))
	nodeRole := strings.TrimSpace(e.CLI.MustRun(t, iam, "output", "-raw", "node_role_name"))
	kubelet := e.StartKubelet()
	t.Cleanup(kubelet.Stop)
	defer func() {
		if t.Failed() {
			t.Log(kubelet.Report(40))
		}
	}()

	cfg := helmConfig(t, e)
	ch, err := loader.Load(filepath.Join("..", "..", chartgen.Dir))
	if err != nil {
		t.Fatal(err)
	}
	install := action.NewInstall(cfg)
	install.ReleaseName, install.Namespace, install.CreateNamespace = "stowage", namespace, true
	install.WaitStrategy = kube.HookOnlyStrategy // the bed runs the controller's pods through the Kubelet stand-in
	v := e.Values()
	if _, err := install.RunWithContext(ctx, ch, map[string]any{"clusterName": v["cluster_name"], "clusterEndpoint": v["cluster_endpoint"],
		"region": "us-east-1", "serviceAccount": map[string]any{"roleArn": roleARN}, "extraArgs": []any{"--batch-idle-duration=1s"}}); err != nil {
		t.Fatalf("helm install: %v", err)
	}
	first := leader(t, e, "")
	w := tfbed.Workload{Namespace: "shop", Name: "inflate", Replicas: 2, NodeSelector: map[string]string{v1alpha1.LabelNodePool: "general"},
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
	if err := e.Bed.Create(ctx, policy(t, nodeRole)...); err != nil {
		t.Fatal(err)
	}
	if err := e.Run(ctx, w); err != nil {
		t.Fatal(err)
	}
	tfbed.Eventually(t, 4*time.Minute, func() error { _, err := e.Nodes(ctx, w); return err })
	claims := claimNames(t, e)

	upgrade := action.NewUpgrade(cfg)
	upgrade.Namespace, upgrade.ReuseValues, upgrade.WaitStrategy = namespace, true, kube.HookOnlyStrategy
	if _, err := upgrade.RunWithContext(ctx, "stowage", ch, map[string]any{"logLevel": "debug", "replicas": 1}); err != nil {
		t.Fatalf("helm upgrade: %v", err)
	}
	checkUpgraded(t, e, first)
	if after := claimNames(t, e); !slices.Equal(after, claims) {
		t.Errorf("the upgrade replaced nodes: claims %v, then %v", claims, after)
	}

	uninstall(t, e, cfg, w)
	// The IAM goes in the clean-up; instances must be gone now.
	left, err := e.Leftovers(ctx)
	if err != nil || slices.ContainsFunc(left, func(l string) bool {
		return strings.HasPrefix(l, "instance ") && !strings.HasPrefix(l, "instance profile ")
	}) {
		t.Errorf("the uninstall left an instance running: %v (%v)", left, err)
	}
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

// helmConfig reaches the bed's API server as its administrator, storing
// releases as Secrets, as the helm CLI does.
func helmConfig(t *testing.T, e *tfbed.Env) *action.Configuration {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	kubeconfig, ns := e.Bed.ControlPlane.KubeconfigPath, namespace
	flags.KubeConfig, flags.Namespace = &kubeconfig, &ns
	cfg := action.NewConfiguration()
	if err := cfg.Init(flags, namespace, "secret"); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// leader waits for a holder of the controller's lease other than not.
func leader(t *testing.T, e *tfbed.Env, not string) string {
	t.Helper()
	var holder string
	tfbed.Eventually(t, 3*time.Minute, func() error {
		var l coordinationv1.Lease
		if err := e.Bed.Admin.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: "stowage-leader-election"}, &l); err != nil {
			return err
		}
		if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" || *l.Spec.HolderIdentity == not {
			return errLeader
		}
		holder = *l.Spec.HolderIdentity
		return nil
	})
	return holder
}

var errLeader = apierrors.NewNotFound(coordinationv1.Resource("leases"), "a new holder of stowage-leader-election")

// checkUpgraded: the Deployment says what the upgrade set, and a controller
// started from it leads.
func checkUpgraded(t *testing.T, e *tfbed.Env, before string) {
	t.Helper()
	var d appsv1.Deployment
	if err := e.Bed.Admin.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: "stowage"}, &d); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, v := range d.Spec.Template.Spec.Containers[0].Env {
		env[v.Name] = v.Value
	}
	if *d.Spec.Replicas != 1 || env["LOG_LEVEL"] != "debug" || env["CLUSTER_NAME"] != "bed" {
		t.Errorf("after the upgrade: replicas %d, env %v", *d.Spec.Replicas, env)
	}
	leader(t, e, before)
}

func claimNames(t *testing.T, e *tfbed.Env) []string {
	t.Helper()
	var claims v1alpha1.NodeClaimList
	if err := e.Bed.Admin.List(context.Background(), &claims); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range claims.Items {
		out = append(out, c.Name)
	}
	slices.Sort(out)
	return out
}

// uninstall follows the install guide: pools, then claims (the controller
// drains and terminates them), then classes, then the release.
func uninstall(t *testing.T, e *tfbed.Env, cfg *action.Configuration, w tfbed.Workload) {
	t.Helper()
	ctx := context.Background()
	if err := e.Delete(ctx, w); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []struct {
		obj  client.Object
		list client.ObjectList
	}{{&v1alpha1.NodePool{}, &v1alpha1.NodePoolList{}}, {&v1alpha1.NodeClaim{}, &v1alpha1.NodeClaimList{}}, {&v1alpha1.NodeClass{}, &v1alpha1.NodeClassList{}}} {
		if err := deleteAll(ctx, e, kind.obj, kind.list); err != nil {
			t.Fatal(err)
		}
	}
	u := action.NewUninstall(cfg)
	u.WaitStrategy = kube.HookOnlyStrategy
	if _, err := u.Run("stowage"); err != nil {
		t.Fatalf("helm uninstall: %v", err)
	}
	var d appsv1.Deployment
	if err := e.Bed.Admin.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "stowage"}, &d); !apierrors.IsNotFound(err) {
		t.Errorf("the Deployment after helm uninstall: %v", err)
	}
	var crds v1alpha1.NodePoolList
	if err := e.Bed.Admin.List(ctx, &crds); err != nil {
		t.Errorf("helm uninstall removed the CRDs of crds/, which helm keeps: %v", err)
	}
}

// deleteAll deletes every object of obj's kind and waits until they are
// gone, finalizers included.
func deleteAll(ctx context.Context, e *tfbed.Env, obj client.Object, list client.ObjectList) error {
	if err := e.Bed.Admin.DeleteAllOf(ctx, obj); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := e.Bed.Admin.List(ctx, list); err != nil {
			return false, err
		}
		return meta.LenList(list) == 0, nil
	})
}
