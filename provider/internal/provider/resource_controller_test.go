package provider_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	autoscalingcrd "github.com/stowage-dev/stowage/controller/apis/autoscaling/crd"
	"github.com/stowage-dev/stowage/controller/apis/crds"
	"github.com/stowage-dev/stowage/provider/internal/kube"
)

var (
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	services    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	namespaces  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

func controllerConfig(extra string) string {
	return awsProvider() + fmt.Sprintf(`
resource "stowage_controller" "this" {
  cluster_name     = "acc"
  cluster_endpoint = "https://acc.example.com"
  %s
}
`, extra)
}

// TestAccController installs the controller from the project's manifests,
// imports it, updates it, finds and undoes drift, refuses to remove it while a
// NodeClaim exists unless told to delete it, and removes it cleanly.
func TestAccController(t *testing.T) {
	const addr = "stowage_controller.this"
	t.Cleanup(func() { reinstallCRDs(t) }) // the other tests of the package use them
	irsa := `role_arn = "arn:aws:iam::123456789012:role/acc-controller"
  cluster_cidr = "10.100.0.0/16"
  settings = { "batch-idle-duration" = "2s", "preferences" = "respect" }`
	updated := `replicas  = 3
  log_level = "debug"
  cpu_request = "250m"`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		CheckDestroy:             checkUninstalled,
		Steps: []resource.TestStep{
			{
				Config: controllerConfig(irsa),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("region"), knownvalue.StringExact("us-east-1")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("image"), knownvalue.StringExact("ghcr.io/stowage-dev/stowage:dev")),
				},
				Check: checkDeployment(func(d *appsv1.Deployment, sa map[string]string) error {
					c := d.Spec.Template.Spec.Containers[0]
					if !slices.Equal(c.Args, []string{"run", "--batch-idle-duration=2s", "--preferences=respect"}) || *d.Spec.Replicas != 2 {
						return fmt.Errorf("args %v replicas %d", c.Args, *d.Spec.Replicas)
					}
					if env := envOf(c.Env); env["CLUSTER_NAME"] != "acc" || env["AWS_REGION"] != "us-east-1" || env["CLUSTER_ENDPOINT"] != "https://acc.example.com" ||
						env["CLUSTER_CIDR"] != "10.100.0.0/16" {
						return fmt.Errorf("env %v", env)
					}
					if sa["eks.amazonaws.com/role-arn"] != "arn:aws:iam::123456789012:role/acc-controller" {
						return fmt.Errorf("service account annotations %v", sa)
					}
					if m := d.ManagedFields; len(m) == 0 || m[0].Manager != kube.FieldManager || m[0].Operation != metav1.ManagedFieldsOperationApply {
						return fmt.Errorf("managed fields %v, want a server-side apply by %s", m, kube.FieldManager)
					}
					return nil
				}),
			},
			{ResourceName: addr, ImportState: true, ImportStateVerify: true, ImportStateId: "stowage"},
			{
				Config:           controllerConfig(updated),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)}},
				Check: checkDeployment(func(d *appsv1.Deployment, sa map[string]string) error {
					c := d.Spec.Template.Spec.Containers[0]
					if *d.Spec.Replicas != 3 || envOf(c.Env)["LOG_LEVEL"] != "debug" || c.Resources.Requests.Cpu().String() != "250m" || envOf(c.Env)["CLUSTER_CIDR"] != "" {
						return fmt.Errorf("replicas %d env %v cpu %s", *d.Spec.Replicas, envOf(c.Env), c.Resources.Requests.Cpu())
					}
					if _, ok := sa["eks.amazonaws.com/role-arn"]; ok || !slices.Equal(c.Args, []string{"run"}) {
						return fmt.Errorf("the role annotation %v or the flags %v were not removed", sa, c.Args)
					}
					return nil
				}),
			},
			{ResourceName: addr, ImportState: true, ImportStateVerify: true, ImportStateId: "stowage"},
			{
				// Drift: the metrics Service deleted and the image changed by another manager come back.
				PreConfig:        func() { makeControllerDrift(t) },
				Config:           controllerConfig(updated),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)}},
				Check: checkDeployment(func(d *appsv1.Deployment, _ map[string]string) error {
					if img := d.Spec.Template.Spec.Containers[0].Image; img != "ghcr.io/stowage-dev/stowage:dev" {
						return fmt.Errorf("image %s after the apply", img)
					}
					_, err := bed.dyn.Resource(services).Namespace("stowage").Get(context.Background(), "stowage", metav1.GetOptions{})
					return err
				}),
			},
			{Config: controllerConfig(updated), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
			{
				PreConfig: func() {
					createNodeClaim(t, "acc-left-behind")
					leaveControllerLitter(t) // which the destroy takes away
				},
				Config:      controllerConfig(updated),
				Destroy:     true,
				ExpectError: regexp.MustCompile(`(?s)1 NodeClaims still exist \(acc-left-behind\).*destroy_node_claims = true`),
			},
			{Config: controllerConfig(updated + "\n  destroy_node_claims = true")},
		},
	})
}

func TestAccControllerRefusesBadInput(t *testing.T) {
	bad := func(extra, want string) resource.TestStep {
		return resource.TestStep{Config: controllerConfig(extra), PlanOnly: true, ExpectError: regexp.MustCompile(want)}
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		Steps: []resource.TestStep{
			bad(`settings = { "batch-idle-time" = "2s" }`, `(?s)Invalid settings.*batch-idle-time`),
			bad(`settings = { "batch-idle-duration" = "soon" }`, `(?s)Invalid settings.*batch-idle-duration.*not a duration`),
			bad(`settings = { "cluster-name" = "other" }`, `(?s)Invalid settings.*cluster-name is set by cluster_name`),
			bad(`cluster_cidr = "10.100.0.0"`, `(?s)Invalid cluster_cidr.*"10.100.0.0" is not a CIDR`),
			bad(`log_level = "loud"`, `(?s)Invalid log_level.*not a level`),
			bad(`replicas = 0`, `(?s)Invalid replicas.*1 to 10`),
			bad(`image_pull_policy = "Sometimes"`, `(?s)Invalid image_pull_policy`),
			bad(`role_arn = "acc-controller"`, `(?s)Invalid role_arn.*stowage_controller_role.arn`),
			bad(`memory_limit = "lots"`, `(?s)Invalid memory_limit.*not a quantity`),
			bad(`namespace = "kube-system"`, `(?s)Invalid namespace.*kube-system is deleted with the controller`),
			bad(`namespace = "Stowage"`, `(?s)Invalid namespace.*not a namespace name`),
			bad(`service_account = "controller_sa"`, `(?s)Invalid service_account.*not a service account name`),
			{Config: awsProvider() + `resource "stowage_controller" "x" {
  cluster_name     = "acc"
  cluster_endpoint = "http://acc.example.com"
}`, PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)Invalid cluster_endpoint.*not an https URL`)},
		},
	})
}

func envOf(env []corev1.EnvVar) map[string]string {
	out := map[string]string{}
	for _, e := range env {
		out[e.Name] = e.Value
	}
	return out
}

func checkDeployment(check func(*appsv1.Deployment, map[string]string) error) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx := context.Background()
		u, err := bed.dyn.Resource(deployments).Namespace("stowage").Get(ctx, "stowage", metav1.GetOptions{})
		if err != nil {
			return err
		}
		var d appsv1.Deployment
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &d); err != nil {
			return err
		}
		sa, err := bed.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}).Namespace("stowage").Get(ctx, "stowage", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, name := range []string{"nodepools.stowage.dev", "nodeclasses.stowage.dev", "nodeclaims.stowage.dev"} {
			crd, err := bed.dyn.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
			if err != nil || !strings.Contains(fmt.Sprint(crd.Object["status"]), "Established") {
				return fmt.Errorf("CRD %s: %v", name, err)
			}
		}
		return check(&d, sa.GetAnnotations())
	}
}

// makeControllerDrift deletes the metrics Service and has another field
// manager change the image, as a hand edit would.
func makeControllerDrift(t *testing.T) {
	ctx := context.Background()
	if err := bed.dyn.Resource(services).Namespace("stowage").Delete(ctx, "stowage", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	u, err := bed.dyn.Resource(deployments).Namespace("stowage").Get(ctx, "stowage", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	containers[0].(map[string]any)["image"] = "example.com/not-stowage:1"
	_ = unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers")
	if _, err := bed.dyn.Resource(deployments).Namespace("stowage").Update(ctx, u, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
}

func createNodeClaim(t *testing.T, name string) {
	claim := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "stowage.dev/v1alpha1", "kind": "NodeClaim",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{
			"nodeClassRef": map[string]any{"group": "stowage.dev", "kind": "NodeClass", "name": "default"},
			"requirements": []any{map[string]any{"key": "stowage.dev/capacity-type", "operator": "In", "values": []any{"spot"}}}}}}
	if _, err := bed.dyn.Resource(kube.Resource("nodeclaims")).Create(context.Background(), claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func checkUninstalled(*terraform.State) error {
	ctx := context.Background()
	for _, probe := range []func() error{
		func() error {
			_, err := bed.dyn.Resource(deployments).Namespace("stowage").Get(ctx, "stowage", metav1.GetOptions{})
			return err
		},
		func() error {
			_, err := bed.dyn.Resource(namespaces).Get(ctx, "stowage", metav1.GetOptions{})
			return err
		},
		func() error {
			_, err := bed.dyn.Resource(crdResource).Get(ctx, "nodeclaims.stowage.dev", metav1.GetOptions{})
			return err
		},
		func() error { // installed by stowage_controller, as the cluster had none
			_, err := bed.dyn.Resource(crdResource).Get(ctx, autoscalingcrd.Name, metav1.GetOptions{})
			return err
		},
		func() error { // likewise
			_, err := bed.dyn.Resource(crdResource).Get(ctx, autoscalingcrd.ProvisioningRequestName, metav1.GetOptions{})
			return err
		},
	} {
		if err := probe(); !apierrors.IsNotFound(err) {
			return fmt.Errorf("an object of the controller is still there (%v)", err)
		}
	}
	if n, err := bed.dyn.Resource(kube.Resource("nodeclaims")).List(ctx, metav1.ListOptions{}); err == nil && len(n.Items) > 0 {
		return fmt.Errorf("%d NodeClaims left", len(n.Items))
	}
	if lts := access.emu.LaunchTemplates(); len(lts) > 0 {
		return fmt.Errorf("launch templates left: %v", lts)
	}
	if ps := access.emu.InstanceProfiles(); slices.Contains(ps, "stowage_acclitter") {
		return fmt.Errorf("the controller's instance profile is left: %v", ps)
	}
	return nil
}

// leaveControllerLitter makes what the controller makes for a cluster and
// keeps: a launch template and an instance profile holding a node role.
func leaveControllerLitter(t *testing.T) {
	ctx := context.Background()
	_, err := ec2.NewFromConfig(adminAWS()).CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: awssdk.String("stowage/acc/litter"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: awssdk.String("ami-0123")},
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate,
			Tags: []ec2types.Tag{{Key: awssdk.String("stowage.dev/cluster"), Value: awssdk.String("acc")}}}}})
	if err != nil {
		t.Fatal(err)
	}
	c := iam.NewFromConfig(adminAWS())
	access.emu.AddRole("acc-litter-node")
	if _, err := c.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: awssdk.String("stowage_acclitter"),
		Tags: []iamtypes.Tag{{Key: awssdk.String("kubernetes.io/cluster/acc"), Value: awssdk.String("owned")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{InstanceProfileName: awssdk.String("stowage_acclitter"),
		RoleName: awssdk.String("acc-litter-node")}); err != nil {
		t.Fatal(err)
	}
}

// reinstallCRDs puts back the CRDs the controller's destroy removed.
func reinstallCRDs(t *testing.T) {
	all, err := crds.CRDs()
	if err == nil {
		_, err = envtest.InstallCRDs(bed.cp.Config, envtest.CRDInstallOptions{CRDs: all})
	}
	if err != nil {
		t.Errorf("reinstalling the CRDs: %v", err)
	}
}
