package provider_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	autoscalingcrd "github.com/stowage-dev/stowage/controller/apis/autoscaling/crd"
	"github.com/stowage-dev/stowage/provider/internal/kube"
)

const bufferAddr = "stowage_capacity_buffer.vllm"

var bufferResource = schema.GroupVersionResource{Group: "autoscaling.x-k8s.io", Version: "v1beta1", Resource: "capacitybuffers"}

func bufferConfig(body string) string {
	return fmt.Sprintf(`
resource "stowage_capacity_buffer" "vllm" {
  namespace = "inference"
  name      = "vllm-headroom"
  %s
}
`, body)
}

// TestAccCapacityBuffer creates a buffer of one vLLM replica in a namespace,
// imports it by namespace/name, turns it into one of a PodTemplate under
// limits in place (the scalableRef goes from the server), proves the plan
// after apply is empty (the CRD's default strategy included), and destroys
// it. A buffer the CRD's rules or Stowage refuse fails the plan, naming the
// attribute.
func TestAccCapacityBuffer(t *testing.T) {
	installBufferCRD(t)
	createNamespace(t, "inference")
	scalable := `
  replicas = 1
  scalable_ref {
    api_group = "apps"
    kind      = "Deployment"
    name      = "vllm"
  }`
	template := `
  limits = { "nvidia.com/gpu" = "8" }
  pod_template_ref {
    name = "vllm-chunk"
  }`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		CheckDestroy:             checkBufferGone,
		Steps: []resource.TestStep{
			{
				Config: bufferConfig(scalable),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(bufferAddr, tfjsonpath.New("id"), knownvalue.StringExact("inference/vllm-headroom")),
					statecheck.ExpectKnownValue(bufferAddr, tfjsonpath.New("provisioning_strategy"), knownvalue.StringExact("buffer.x-k8s.io/active-capacity")),
				},
				Check: checkBuffer(map[string]string{
					"spec.scalableRef.kind":             "Deployment",
					"spec.replicas":                     "1",
					"spec.provisioningStrategy":         "buffer.x-k8s.io/active-capacity", // the CRD's default
					"metadata.managedFields[0].manager": kube.FieldManager,
				}),
			},
			{ResourceName: bufferAddr, ImportState: true, ImportStateVerify: true, ImportStateId: "inference/vllm-headroom"},
			{
				Config: bufferConfig(template),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(bufferAddr, plancheck.ResourceActionUpdate),
				}},
				Check: checkBuffer(map[string]string{
					"spec.podTemplateRef.name": "vllm-chunk",
					"spec.limits":              "map[nvidia.com/gpu:8]",
					"spec.scalableRef":         "<absent>",
					"spec.replicas":            "<absent>",
				}),
			},
			{Config: bufferConfig(template), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
			{ResourceName: bufferAddr, ImportState: true, ImportStateId: "vllm-headroom", ExpectError: regexp.MustCompile(`import a CapacityBuffer by namespace/name`)},
		},
	})
}

// TestAccCapacityBufferRefusedAtPlan: each buffer fails `terraform plan`
// with the attribute and the fix named, before anything is written.
func TestAccCapacityBufferRefusedAtPlan(t *testing.T) {
	cases := map[string]struct{ body, want string }{
		"a kind Stowage does not read": {`
  replicas = 1
  scalable_ref {
    api_group = "batch"
    kind      = "CronJob"
    name      = "nightly"
  }`, `(?s)scalable_ref.kind.*Unsupported value: "batch/CronJob".*apps/Deployment`},
		"both references (the CRD's rule)": {`
  replicas = 1
  pod_template_ref {
    name = "vllm-chunk"
  }
  scalable_ref {
    kind = "Deployment"
    name = "vllm"
  }`, `either PodTemplateRef or ScalableRef`},
		"no reference": {`replicas = 1`, `(?s)pod_template_ref.*set podTemplateRef \(a PodTemplate\) or scalableRef`},
		"a percentage of a PodTemplate": {`
  percentage = 10
  limits     = { cpu = "64" }
  pod_template_ref {
    name = "vllm-chunk"
  }`, `(?s)percentage.*needs scalableRef`},
		"a reference without a name (the CRD's schema)": {`
  replicas = 1
  pod_template_ref {}`, `(?s)pod_template_ref.name.*Required value`},
		"negative replicas (the CRD's schema)": {`
  replicas = -1
  scalable_ref {
    kind = "Deployment"
    name = "vllm"
  }`, `(?s)replicas.*greater than or equal to 0`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: providers,
				Steps:                    []resource.TestStep{{Config: bufferConfig(tc.body), PlanOnly: true, ExpectError: regexp.MustCompile(tc.want)}},
			})
		})
	}
}

// installBufferCRD installs the CapacityBuffer CRD for the test and removes
// it after, waiting until it is gone: stowage_controller's test wants a
// cluster without it.
func installBufferCRD(t *testing.T) {
	t.Helper()
	if _, err := envtest.InstallCRDs(bed.cp.Config, envtest.CRDInstallOptions{
		CRDs: []*apiextensionsv1.CustomResourceDefinition{autoscalingcrd.MustCapacityBuffer()}}); err != nil {
		t.Fatalf("installing the CapacityBuffer CRD: %v", err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		if err := bed.dyn.Resource(crdResource).Delete(ctx, autoscalingcrd.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("removing the CapacityBuffer CRD: %v", err)
		}
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := bed.dyn.Resource(crdResource).Get(ctx, autoscalingcrd.Name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Errorf("the CapacityBuffer CRD is still there: %v", err)
		}
	})
}

func createNamespace(t *testing.T, name string) {
	t.Helper()
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	_, err := bed.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(context.Background(), ns, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
}

// checkBuffer compares fields of the buffer the API server holds with want
// ("<absent>" for a field that must not be there).
func checkBuffer(want map[string]string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		obj, err := bed.dyn.Resource(bufferResource).Namespace("inference").Get(context.Background(), "vllm-headroom", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for p, w := range want {
			got, ok := lookup(obj.Object, p)
			switch {
			case w == "<absent>" && ok:
				return fmt.Errorf("%s = %v, want it absent", p, got)
			case w != "<absent>" && (!ok || fmt.Sprint(got) != w):
				return fmt.Errorf("%s = %v (present %v), want %s", p, got, ok, w)
			}
		}
		return nil
	}
}

func checkBufferGone(*terraform.State) error {
	_, err := bed.dyn.Resource(bufferResource).Namespace("inference").Get(context.Background(), "vllm-headroom", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("the buffer is still there after destroy (%v)", err)
	}
	return nil
}
