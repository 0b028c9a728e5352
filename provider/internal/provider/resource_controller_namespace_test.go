package provider_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	serviceAccounts     = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	clusterRoleBindings = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}
	roleBindings        = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}
	roles               = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}
)

// TestAccControllerInItsOwnNamespace installs the controller in a namespace
// and as a service account of the user's choosing, as a platform team moving
// from Karpenter keeps its names: every namespaced object goes there, the
// bindings name that service account, the IRSA annotation is on it; the
// import by namespace reads it back whole, and the destroy removes the
// namespace.
func TestAccControllerInItsOwnNamespace(t *testing.T) {
	const addr = "stowage_controller.this"
	t.Cleanup(func() { reinstallCRDs(t) })
	config := controllerConfig(`namespace       = "karpenter"
  service_account = "karpenter-controller"
  role_arn        = "arn:aws:iam::123456789012:role/acc-controller"`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		CheckDestroy:             checkNamespaceGone("karpenter"),
		Steps: []resource.TestStep{
			{Config: config, Check: resource.ComposeTestCheckFunc(
				resource.TestCheckResourceAttr(addr, "id", "karpenter"),
				checkInNamespace("karpenter", "karpenter-controller"))},
			{ResourceName: addr, ImportState: true, ImportStateVerify: true, ImportStateId: "karpenter"},
			{Config: config, PlanOnly: true},
		},
	})
}

// checkInNamespace finds the controller's objects in ns, running as sa.
func checkInNamespace(ns, sa string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx := context.Background()
		d, err := bed.dyn.Resource(deployments).Namespace(ns).Get(ctx, "stowage", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got, _, _ := unstructured.NestedString(d.Object, "spec", "template", "spec", "serviceAccountName"); got != sa {
			return fmt.Errorf("the Deployment runs as %q, want %q", got, sa)
		}
		account, err := bed.dyn.Resource(serviceAccounts).Namespace(ns).Get(ctx, sa, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if a := account.GetAnnotations()["eks.amazonaws.com/role-arn"]; a != "arn:aws:iam::123456789012:role/acc-controller" {
			return fmt.Errorf("the service account's role annotation is %q", a)
		}
		if _, err := bed.dyn.Resource(roles).Namespace(ns).Get(ctx, "stowage", metav1.GetOptions{}); err != nil {
			return fmt.Errorf("the leader election Role: %w", err)
		}
		for _, b := range []struct {
			gvr schema.GroupVersionResource
			ns  string
		}{{clusterRoleBindings, ""}, {roleBindings, ns}} {
			u, err := bed.dyn.Resource(b.gvr).Namespace(b.ns).Get(ctx, "stowage", metav1.GetOptions{})
			if err != nil {
				return err
			}
			subjects, _, _ := unstructured.NestedSlice(u.Object, "subjects")
			if s := subjects[0].(map[string]any); s["name"] != sa || s["namespace"] != ns {
				return fmt.Errorf("%s stowage binds %v, want %s/%s", b.gvr.Resource, s, ns, sa)
			}
		}
		if _, err := bed.dyn.Resource(namespaces).Get(ctx, "stowage", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("namespace stowage exists (%v): nothing goes there", err)
		}
		return nil
	}
}

func checkNamespaceGone(ns string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		if _, err := bed.dyn.Resource(namespaces).Get(context.Background(), ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("namespace %s is still there (%v)", ns, err)
		}
		if _, err := bed.dyn.Resource(clusterRoleBindings).Get(context.Background(), "stowage", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the ClusterRoleBinding is still there (%v)", err)
		}
		return nil
	}
}
