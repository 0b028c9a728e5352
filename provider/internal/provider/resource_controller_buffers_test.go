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

// sharedCRDs are the CRDs stowage_controller shares with other owners, as
// those owners install them.
var sharedCRDs = []string{autoscalingcrd.Name, autoscalingcrd.ProvisioningRequestName}

// TestAccControllerInstallsTheSharedCRDsOnlyWhereMissing: a cluster without
// the CapacityBuffer and ProvisioningRequest CRDs gets them, labelled as
// stowage_controller's, and loses them with the controller; one whose CRDs
// another owner installed (Cluster Autoscaler, here with a label of its own)
// keeps them untouched through the install, a plan and the destroy.
func TestAccControllerInstallsTheSharedCRDsOnlyWhereMissing(t *testing.T) {
	t.Cleanup(func() { reinstallCRDs(t) })
	config := controllerConfig("")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		CheckDestroy:             checkUninstalled,
		Steps: []resource.TestStep{{Config: config, Check: func(*terraform.State) error {
			for _, name := range sharedCRDs {
				crd, err := bed.dyn.Resource(crdResource).Get(context.Background(), name, metav1.GetOptions{})
				if err != nil {
					return fmt.Errorf("the CRD %s was not installed: %w", name, err)
				}
				if l := crd.GetLabels()["stowage.dev/installed-by"]; l != "stowage_controller" {
					return fmt.Errorf("the installed CRD %s's labels are %v, want stowage.dev/installed-by: stowage_controller", name, crd.GetLabels())
				}
			}
			return nil
		}}},
	})

	theirs := []*apiextensionsv1.CustomResourceDefinition{autoscalingcrd.MustCapacityBuffer(), autoscalingcrd.MustProvisioningRequest()}
	for _, d := range theirs {
		d.Labels = map[string]string{"app.kubernetes.io/managed-by": "cluster-autoscaler"}
	}
	if _, err := envtest.InstallCRDs(bed.cp.Config, envtest.CRDInstallOptions{CRDs: theirs}); err != nil {
		t.Fatalf("installing Cluster Autoscaler's CRDs: %v", err)
	}
	t.Cleanup(func() {
		for _, name := range sharedCRDs {
			_ = bed.dyn.Resource(crdResource).Delete(context.Background(), name, metav1.DeleteOptions{})
		}
	})
	before := map[string]string{}
	for _, name := range sharedCRDs {
		before[name] = theirsVersion(t, name)
	}
	untouched := func(*terraform.State) error {
		for _, name := range sharedCRDs {
			crd, err := bed.dyn.Resource(crdResource).Get(context.Background(), name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("Cluster Autoscaler's CRD %s was deleted", name)
			}
			if err != nil {
				return err
			}
			if crd.GetResourceVersion() != before[name] || crd.GetLabels()["stowage.dev/installed-by"] != "" {
				return fmt.Errorf("Cluster Autoscaler's CRD %s was changed: resourceVersion %s (was %s), labels %v", name, crd.GetResourceVersion(), before[name], crd.GetLabels())
			}
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

func theirsVersion(t *testing.T, name string) string {
	t.Helper()
	crd, err := bed.dyn.Resource(crdResource).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return crd.GetResourceVersion()
}
