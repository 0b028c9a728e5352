package clitest

import (
	"context"
	"fmt"
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
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testbed"
	"github.com/stowage-dev/stowage/internal/tfbed"
	"github.com/stowage-dev/stowage/internal/tfcli"
)

// e2eSettle bounds each wait for the system to converge.
const e2eSettle = 3 * time.Minute

// e2e is the whole system: the bed with nothing of Stowage installed, the
// emulator over TLS, the provider in a filesystem mirror (internal/tfbed),
// and the controller run from this tree as a process of the bed.
type e2e struct {
	*tfbed.Env
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
	dir := tfcli.Merge(t, "testdata/e2e")
	values := e.Values()
	vars := tfbed.Flags(map[string]string{"aws_endpoint": values["aws_endpoint"], "cluster_endpoint": values["cluster_endpoint"],
		"cluster_ca": values["cluster_ca"], "oidc_provider_arn": values["oidc_provider_arn"], "lambda_architecture": values["lambda_architecture"]})
	e.CLI.MustRun(t, dir, "init", "-input=false")
	apply := e.CLI.MustRun(t, dir, append([]string{"apply", "-input=false", "-auto-approve"}, vars...)...)
	t.Logf("terraform apply:\n%s", lastLines(apply, 3))
	if plan := e.CLI.MustRun(t, dir, append([]string{"plan", "-input=false"}, vars...)...); !strings.Contains(plan, "No changes") {
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
	destroy := e.CLI.MustRun(t, dir, append([]string{"destroy", "-input=false", "-auto-approve"}, vars...)...)
	t.Logf("terraform destroy:\n%s", lastLines(destroy, 2))
	if err := e.controller.Stop(); err != nil {
		t.Logf("the controller ended with %v (its service account was deleted under it)", err)
	}
	e.expectNothingLeft(t)
}

func startE2E(t *testing.T) *e2e {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	env, err := tfbed.Start(ctx, t.TempDir(), tfbed.Options{InstanceTypes: tfbed.Catalogue("g5.12xlarge")})
	if err != nil {
		t.Fatal(err) // a missing component names `make tools`
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping the bed: %v", err)
		}
	})
	e := &e2e{Env: env}
	env.Bed.Emulator.OnAuthorize(func(a awsemu.Authorization) {
		if a.Role == "StowageController-bed" && !a.Allowed {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.denied = append(e.denied, a)
		}
	})
	return e
}

// startController runs the controller built from this tree as the bed's
// process, as Terraform's Deployment describes it.
func (e *e2e) startController(t *testing.T) {
	t.Helper()
	p, err := e.RunController(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	e.controller = p
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the controller's log:\n%s", tfbed.LogTail(p, 60))
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
	if err := e.Bed.Create(ctx, objs...); err != nil {
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
	if err := e.Bed.Admin.List(ctx, &pods, client.InNamespace(e2eNamespace), client.MatchingLabels{"app": app}); err != nil {
		return err
	}
	running := 0
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
			continue
		}
		var node corev1.Node
		if err := e.Bed.Admin.Get(ctx, client.ObjectKey{Name: p.Spec.NodeName}, &node); err != nil {
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
	before := len(e.Bed.Emulator.Instances())
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: e2eNamespace, Name: "inference"}, Spec: corev1.PodSpec{
		NodeSelector: map[string]string{"tier": "inference"},
		Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule}},
		Containers:   []corev1.Container{{Name: "model", Image: "vllm"}}}}
	if err := e.Bed.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	e.eventually(t, func() error {
		var claims v1alpha1.NodeClaimList
		if err := e.Bed.Admin.List(ctx, &claims, client.MatchingLabels{v1alpha1.LabelNodePool: "gpu-inference"}); err != nil {
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
	if n := len(e.Bed.Emulator.Instances()); n != before {
		t.Errorf("%d instances launched by a denied launch", n-before)
	}
	if err := e.Bed.Admin.Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
}

func (e *e2e) deleteWorkload(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e2eNamespace}}
	if err := e.Bed.Admin.Delete(context.Background(), ns); client.IgnoreNotFound(err) != nil {
		t.Error(err)
	}
}

// expectNothingLeft checks the emulator holds nothing Terraform or the
// controller made: no role but the bed's, no instance profile, queue, log
// group, function, mapping, rule, access entry, live instance or launch
// template.
func (e *e2e) expectNothingLeft(t *testing.T) {
	left, err := e.Leftovers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range left {
		t.Errorf("left after destroy: %s", l)
	}
}

func (e *e2e) eventually(t *testing.T, check func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), 500*time.Millisecond, e2eSettle, true, func(context.Context) (bool, error) {
		last = check()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("after %v: %v", e2eSettle, last)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func ptr[T any](v T) *T { return &v }
