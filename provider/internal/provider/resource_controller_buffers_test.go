package provider_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	autoscalingcrd "github.com/stowage-dev/stowage/controller/apis/autoscaling/crd"
)

// TestAccControllerInstallsTheCapacityBufferCRDOnlyWhereMissing: a cluster
// without the CapacityBuffer CRD gets it, labelled as stowage_controller's,
// and loses it with the controller; one whose CRD another owner installed
// (Cluster Autoscaler, here with a label of its own) keeps it untouched
// through the install, a plan and the destroy.
func TestAccControllerInstallsTheCapacityBufferCRDOnlyWhereMissing(t *testing.T) {
	t.Cleanup(func() { reinstallCRDs(t) })
	config := controllerConfig("")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		CheckDestroy:             checkUninstalled,
		Steps: []resource.TestStep{{Config: config, Check: func(*terraform.State) error {
			crd, err := bed.dyn.Resource(crdResource).Get(context.Background(), autoscalingcrd.Name, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("the CapacityBuffer CRD was not installed: %w", err)
			}
			if l := crd.GetLabels()["stowage.dev/installed-by"]; l != "stowage_controller" {
				return fmt.Errorf("the installed CRD's labels are %v, want stowage.dev/installed-by: stowage_controller", crd.GetLabels())
			}
			return nil
		}}},
	})

	theirs := autoscalingcrd.MustCapacityBuffer()
	theirs.Labels = map[string]string{"app.kubernetes.io/managed-by": "cluster-autoscaler"}
	if _, err := envtest.InstallCRDs(bed.cp.Config, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{theirs}}); err != nil {
		t.Fatalf("installing Cluster Autoscaler's CRD: %v", err)
	}
	t.Cleanup(func() {
		_ = bed.dyn.Resource(crdResource).Delete(context.Background(), autoscalingcrd.Name, metav1.DeleteOptions{})
	})
	before := theirsVersion(t)
	untouched := func(*terraform.State) error {
		crd, err := bed.dyn.Resource(crdResource).Get(context.Background(), autoscalingcrd.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("Cluster Autoscaler's CapacityBuffer CRD was deleted")
		}
		if err != nil {
			return err
		}
		if crd.GetResourceVersion() != before || crd.GetLabels()["stowage.dev/installed-by"] != "" {
			return fmt.Errorf("Cluster Autoscaler's CRD was changed: resourceVersion %s (was %s), labels %v", crd.GetResourceVersion(), before, crd.GetLabels())
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		CheckDestroy:             untouched,
		Steps: []resource.TestStep{
			{Config: config, Check: untouched},
			{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		},
	})
}

func theirsVersion(t *testing.T) string {
	t.Helper()
	crd, err := bed.dyn.Resource(crdResource).Get(context.Background(), autoscalingcrd.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return crd.GetResourceVersion()
}
