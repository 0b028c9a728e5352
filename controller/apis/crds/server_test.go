package crds_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/stowage-dev/stowage/controller/apis/crds"
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// establishTimeout bounds the wait for the API server to serve the CRDs.
const establishTimeout = 30 * time.Second

// server is a kube-apiserver (with etcd) serving Stowage's CRDs.
type server struct {
	cp      *testenv.ControlPlane
	apiext  apiextensionsclient.Interface
	dynamic dynamic.Interface
}

// startServer starts etcd and kube-apiserver, installs the CRDs and waits until
// every one is Established. It fails t when the components are not built.
func startServer(t *testing.T) *server {
	t.Helper()
	cp := testenv.Start(t, testenv.Options{})
	s := &server{cp: cp}
	var err error
	if s.apiext, err = apiextensionsclient.NewForConfig(cp.Config); err != nil {
		t.Fatalf("building the apiextensions client: %v", err)
	}
	if s.dynamic, err = dynamic.NewForConfig(cp.Config); err != nil {
		t.Fatalf("building the dynamic client: %v", err)
	}
	for _, crd := range crds.MustCRDs() {
		if _, err := s.apiext.ApiextensionsV1().CustomResourceDefinitions().Create(t.Context(), crd, metav1.CreateOptions{}); err != nil {
			t.Fatalf("installing %s: %v", crd.Name, err)
		}
	}
	s.eventually(t, establishTimeout, func() error { return s.established(t.Context()) })
	return s
}

// established returns nil once every CRD is Established with its names accepted.
func (s *server) established(ctx context.Context) error {
	for _, want := range crds.MustCRDs() {
		crd, err := s.apiext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, ct := range []apiextensionsv1.CustomResourceDefinitionConditionType{apiextensionsv1.NamesAccepted, apiextensionsv1.Established} {
			if !hasCondition(crd, ct) {
				return fmt.Errorf("%s is not %s yet: %+v", crd.Name, ct, crd.Status.Conditions)
			}
		}
	}
	return nil
}

func hasCondition(crd *apiextensionsv1.CustomResourceDefinition, ct apiextensionsv1.CustomResourceDefinitionConditionType) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == ct && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// eventually polls check every 50 ms until it returns nil, failing t with the last
// error at the deadline, or at once when a component has exited.
func (s *server) eventually(t *testing.T, timeout time.Duration, check func() error) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		last := check()
		if last == nil {
			return
		}
		if err := s.cp.Err(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-deadline.C:
			t.Fatalf("still failing after %s: %v", timeout, last)
		case <-tick.C:
		}
	}
}

// resource returns the dynamic client of obj's kind.
func (s *server) resource(obj *unstructured.Unstructured) dynamic.ResourceInterface {
	return s.dynamic.Resource(gvr(obj.GetKind()))
}

// plurals maps each Stowage kind to its resource name.
var plurals = map[string]string{"NodePool": "nodepools", "NodeClass": "nodeclasses", "NodeClaim": "nodeclaims"}

func gvr(kind string) schema.GroupVersionResource {
	return v1alpha1.SchemeGroupVersion.WithResource(plurals[kind])
}
