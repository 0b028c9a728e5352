package clitest

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testbed"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// e2eSettle bounds each wait for the system to converge.
const e2eSettle = 3 * time.Minute

// e2e is the whole system: the bed with nothing of Stowage installed, the
// emulator over TLS, the provider in a filesystem mirror, and the
// controller run from this tree as a process of the bed.
type e2e struct {
	*cliEnv
	bed        *testbed.Bed
	functions  *testbed.RIERuntime // runs the Lambda Terraform deploys
	tls        *httptest.Server
	caBundle   string
	controller *testbed.ControllerProcess

	mu     sync.Mutex
	denied []awsemu.Authorization // denials of the controller's role
}

const e2eNamespace = "shop"

// TestEveryResourceEndToEnd applies a configuration with every resource of
// the provider to the bed, runs the controller exactly as Terraform deployed
// it (its Deployment's arguments and environment, its service account, its
// IAM role through IRSA, every AWS call checked against the generated
// policy), has it place a workload, puts a spot interruption through
// EventBridge, the queue and the Lambda Terraform deployed (under the
// runtime interface emulator, as its own role, mapped into the cluster by its
// access entry) to the controller, which replaces the node without losing a
// pod; sees a launch outside the policy denied; and destroys everything,
// leaving nothing in the emulator.
func TestEveryResourceEndToEnd(t *testing.T) {
	e := startE2E(t)
	dir := e.copyExample(t, "testdata/e2e")
	vars := e.vars(t)
	e.run(t, dir, "init", "-input=false")
	apply := e.run(t, dir, append([]string{"apply", "-input=false", "-auto-approve"}, vars...)...)
	t.Logf("terraform apply:\n%s", lastLines(apply, 3))
	if plan := e.run(t, dir, append([]string{"plan", "-input=false"}, vars...)...); !strings.Contains(plan, "No changes") {
		t.Fatalf("a plan after apply is not empty:\n%s", plan)
	}
	e.startController(t)
	steps := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"the controller, as its IAM role, places the workload on spot", e.placesWorkload},
		{"a spot interruption goes through EventBridge, the queue and the Lambda to a replacement", e.spotInterruptionIsHandled},
		{"a launch outside the generated policy is denied", e.launchOutsidePolicyIsDenied},
	}
	for _, s := range steps {
		if !t.Run(s.name, s.run) {
			break
		}
	}
	e.deleteWorkload(t)
	destroy := e.run(t, dir, append([]string{"destroy", "-input=false", "-auto-approve"}, vars...)...)
	t.Logf("terraform destroy:\n%s", lastLines(destroy, 2))
	if err := e.controller.Stop(); err != nil {
		t.Logf("the controller ended with %v (its service account was deleted under it)", err)
	}
	e.expectNothingLeft(t)
}

func startE2E(t *testing.T) *e2e {
	t.Helper()
	bin, err := testenv.Assets(testenv.Terraform, testenv.Etcd, testenv.KubeAPIServer, testenv.KubeScheduler,
		testenv.KubeControllerManager, testenv.Kwok, testenv.LambdaRIE)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	types := awsemu.SmallCatalogue()
	for _, it := range awsemu.BuiltinCatalogue() {
		if it.Name == "g5.12xlarge" {
			types = append(types, it)
		}
	}
	b, err := testbed.Start(ctx, testbed.Options{BinDir: bin, Bare: true, NodeRole: "UnusedBedNodeRole", InstanceTypes: types})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Stop(); err != nil {
			t.Errorf("stopping the bed: %v", err)
		}
	})
	e := &e2e{bed: b, cliEnv: &cliEnv{bin: filepath.Join(bin, testenv.Terraform), cp: b.ControlPlane, dir: t.TempDir()}}
	e.functions = &testbed.RIERuntime{Dir: t.TempDir(), EndpointURL: b.EmulatorURL}
	b.Emulator.SetFunctionRuntime(e.functions)
	e.mirror = filepath.Join(e.dir, "mirror")
	e.tls = httptest.NewTLSServer(b.Emulator.Handler())
	t.Cleanup(e.tls.Close)
	e.caBundle = filepath.Join(e.dir, "emulator-ca.pem")
	if err := os.WriteFile(e.caBundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: e.tls.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	if e.dyn, err = dynamic.NewForConfig(b.ControlPlane.Config); err != nil {
		t.Fatal(err)
	}
	cliConfig, err := e.installProvider()
	if err != nil {
		t.Fatal(err)
	}
	e.envs = append(os.Environ(), "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1", "TF_CLI_CONFIG_FILE="+cliConfig,
		"KUBE_CONFIG_PATH="+b.ControlPlane.KubeconfigPath, "TF_PLUGIN_CACHE_DIR=", "AWS_CA_BUNDLE="+e.caBundle,
		"AWS_ACCESS_KEY_ID=AKIDTERRAFORM", "AWS_SECRET_ACCESS_KEY=terraform", "AWS_CONFIG_FILE="+os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE="+os.DevNull, "AWS_EC2_METADATA_DISABLED=true")
	b.Emulator.OnAuthorize(func(a awsemu.Authorization) {
		if a.Role == "StowageController-bed" && !a.Allowed {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.denied = append(e.denied, a)
		}
	})
	return e
}

// vars are the bed's endpoints and the OIDC provider of its issuer, as -var flags.
func (e *e2e) vars(t *testing.T) []string {
	t.Helper()
	oidc, err := e.bed.TrustIssuer(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ca := base64.StdEncoding.EncodeToString(e.bed.ControlPlane.Config.CAData)
	arch := map[string]string{"amd64": "x86_64", "arm64": "arm64"}[runtime.GOARCH]
	return []string{"-var", "aws_endpoint=" + e.tls.URL, "-var", "cluster_endpoint=" + e.bed.ControlPlane.APIServerURL,
		"-var", "cluster_ca=" + ca, "-var", "oidc_provider_arn=" + oidc, "-var", "lambda_architecture=" + arch}
}

// startController builds stowage from this tree and runs it as the bed's
// process, as Terraform's Deployment describes it.
func (e *e2e) startController(t *testing.T) {
	t.Helper()
	binary := filepath.Join(e.dir, "stowage")
	build := exec.Command("go", "build", "-o", binary, "github.com/stowage-dev/stowage/controller/cmd/stowage")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building stowage: %v\n%s", err, out)
	}
	p, err := e.bed.RunController(context.Background(), testbed.ProcessOptions{Binary: binary, Dir: e.dir,
		AWSEndpoint: e.tls.URL, AWSCABundle: e.caBundle})
	if err != nil {
		t.Fatal(err)
	}
	e.controller = p
	t.Cleanup(func() {
		if t.Failed() {
			log, _ := os.ReadFile(p.LogPath)
			t.Logf("the controller's log:\n%s", lastLines(string(log), 60))
		}
		_ = p.Stop()
	})
}

// placesWorkload runs a web Deployment behind a PDB: the controller
// launches spot nodes for it, through calls the emulator authorizes against
// the policy Terraform generated.
func (e *e2e) placesWorkload(t *testing.T) {
	ctx := context.Background()
	replicas := int32(4)
	labels := map[string]string{"app": "storefront"}
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e2eNamespace}},
		&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: e2eNamespace, Name: "storefront"},
			Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels}}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: e2eNamespace, Name: "storefront"}, Spec: appsv1.DeploymentSpec{
			Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				NodeSelector: map[string]string{"tier": "web"},
				Containers: []corev1.Container{{Name: "app", Image: "storefront", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}}},
	}
	if err := e.bed.Create(ctx, objs...); err != nil {
		t.Fatal(err)
	}
	e.eventually(t, func() error { return e.running("storefront", 4, v1alpha1.CapacityTypeSpot) })
}

// running checks n pods of app Running, on nodes of the capacity type unless it is empty.
func (e *e2e) running(app string, n int, capacityType string) error {
	ctx := context.Background()
	if err := e.controller.Err(); err != nil {
		return err
	}
	var pods corev1.PodList
	if err := e.bed.Admin.List(ctx, &pods, client.InNamespace(e2eNamespace), client.MatchingLabels{"app": app}); err != nil {
		return err
	}
	running := 0
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
			continue
		}
		var node corev1.Node
		if err := e.bed.Admin.Get(ctx, client.ObjectKey{Name: p.Spec.NodeName}, &node); err != nil {
			return err
		}
		if capacityType != "" && node.Labels[v1alpha1.LabelCapacityType] != capacityType {
			return fmt.Errorf("pod %s runs on %s, a %s node", p.Name, node.Name, node.Labels[v1alpha1.LabelCapacityType])
		}
		running++
	}
	if running != n {
		return fmt.Errorf("%d of %d %s pods running", running, n, app)
	}
	return nil
}

// launchOutsidePolicyIsDenied asks for a GPU node of gpu-inference, a pool
// the policy leaves out: the launch is denied with UnauthorizedOperation,
// the claim says which permission is missing, and nothing launches.
func (e *e2e) launchOutsidePolicyIsDenied(t *testing.T) {
	ctx := context.Background()
	before := len(e.bed.Emulator.Instances())
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: e2eNamespace, Name: "inference"}, Spec: corev1.PodSpec{
		NodeSelector: map[string]string{"tier": "inference"},
		Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule}},
		Containers:   []corev1.Container{{Name: "model", Image: "vllm"}}}}
	if err := e.bed.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	e.eventually(t, func() error {
		var claims v1alpha1.NodeClaimList
		if err := e.bed.Admin.List(ctx, &claims, client.MatchingLabels{v1alpha1.LabelNodePool: "gpu-inference"}); err != nil {
			return err
		}
		for _, c := range claims.Items {
			for _, cond := range c.Status.Conditions {
				if cond.Type == v1alpha1.ConditionLaunched && cond.Reason == "Unauthorized" && strings.Contains(cond.Message, "ec2:CreateFleet") {
					t.Logf("claim %s: %s", c.Name, cond.Message)
					return nil
				}
			}
		}
		return fmt.Errorf("no gpu-inference claim says it is unauthorized yet (%d claims)", len(claims.Items))
	})
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, a := range e.denied {
		if pool := a.Context["aws:requesttag/stowage.dev/nodepool"]; len(pool) != 1 || pool[0] != "gpu-inference" {
			t.Errorf("the controller was denied %s on %s outside the gpu-inference launch (%v)", a.Action, a.Resource, a.Context)
		}
	}
	if len(e.denied) == 0 {
		t.Error("the emulator denied the controller nothing")
	}
	if n := len(e.bed.Emulator.Instances()); n != before {
		t.Errorf("%d instances launched by a denied launch", n-before)
	}
	if err := e.bed.Admin.Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
}

func (e *e2e) deleteWorkload(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e2eNamespace}}
	if err := e.bed.Admin.Delete(context.Background(), ns); client.IgnoreNotFound(err) != nil {
		t.Error(err)
	}
}

// expectNothingLeft checks the emulator holds nothing Terraform or the
// controller made: no role but the bed's, no instance profile, queue, log
// group, live instance or launch template.
func (e *e2e) expectNothingLeft(t *testing.T) {
	emu := e.bed.Emulator
	if roles := emu.Roles(); len(roles) != 1 || roles[0] != "UnusedBedNodeRole" {
		t.Errorf("roles left: %v", roles)
	}
	for what, left := range map[string][]string{"instance profiles": emu.InstanceProfiles(), "queues": emu.Queues(),
		"log groups": emu.LogGroups(), "functions": emu.Functions(), "event source mappings": emu.EventSourceMappings(),
		"rules": emu.Rules()} {
		if len(left) > 0 {
			t.Errorf("%s left: %v", what, left)
		}
	}
	for _, in := range emu.Instances() {
		if in.State != "terminated" && in.State != "shutting-down" {
			t.Errorf("instance %s is %s", in.ID, in.State)
		}
	}
	if lts := emu.LaunchTemplates(); len(lts) > 0 {
		t.Errorf("%d launch templates left", len(lts))
	}
	if _, ok := emu.AccessEntryFor("bed", "arn:aws:iam::123456789012:role/bed-interruption"); ok {
		t.Error("the Lambda's access entry is left")
	}
}

func (e *e2e) eventually(t *testing.T, check func() error) {
	t.Helper()
	deadline := time.Now().Add(e2eSettle)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %v", e2eSettle, err)
		}
		time.Sleep(500 * time.Millisecond) //nolint:forbidigo // polling a real system with a deadline
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func ptr[T any](v T) *T { return &v }
