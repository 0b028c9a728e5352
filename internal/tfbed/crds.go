package tfbed

import (
	"context"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/stowage-dev/stowage/controller/apis/crds"
)

// InstallCRDs installs Stowage's CRDs alone, and the extra ones (the
// CapacityBuffer CRD), for a configuration of pools and classes without the
// controller. The function it returns deletes them
// and waits until they are gone, leaving the bed as bare as the package's
// next test expects it; the test's cleanup calls it too (it runs once).
func (e *Env) InstallCRDs(t testing.TB, extra ...*apiextensionsv1.CustomResourceDefinition) (remove func()) {
	t.Helper()
	all, err := crds.CRDs()
	all = append(all, extra...)
	if err == nil {
		_, err = envtest.InstallCRDs(e.Bed.ControlPlane.Config, envtest.CRDInstallOptions{CRDs: all})
	}
	if err != nil {
		t.Fatalf("installing the CRDs: %v", err)
	}
	var once sync.Once
	remove = func() {
		once.Do(func() {
			ctx := context.Background()
			dyn, err := dynamic.NewForConfig(e.Bed.ControlPlane.Config)
			if err != nil {
				t.Error(err)
				return
			}
			res := dyn.Resource(apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions"))
			for _, crd := range all {
				if err := res.Delete(ctx, crd.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
					t.Errorf("deleting CRD %s: %v", crd.Name, err)
				}
				err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
					_, err := res.Get(ctx, crd.Name, metav1.GetOptions{})
					return apierrors.IsNotFound(err), nil
				})
				if err != nil {
					t.Errorf("CRD %s is not gone: %v", crd.Name, err)
				}
			}
		})
	}
	t.Cleanup(remove)
	return remove
}
