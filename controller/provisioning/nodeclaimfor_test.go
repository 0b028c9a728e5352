package provisioning_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/provisioning"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// A claim records the hash of its pool's template at creation, which the
// drift controller and the Terraform provider compare with the pool's.
func TestNodeClaimForRecordsThePoolHash(t *testing.T) {
	pool := &v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	pool.Spec.Template.ObjectMeta.Annotations = map[string]string{"example.com/team": "web"}
	pool.Spec.Template.Spec.NodeClassRef = &v1alpha1.NodeClassReference{Name: "default"}
	claim := provisioning.NodeClaimFor(&scheduler.NewNodeClaim{NodePool: "web"}, pool)
	if got, want := claim.Annotations[v1alpha1.AnnotationNodePoolHash], v1alpha1.NodePoolHash(pool); got != want || got == "" {
		t.Errorf("nodepool hash %q, want %q", got, want)
	}
	if got := claim.Annotations[v1alpha1.AnnotationHashVersion]; got != v1alpha1.HashVersion {
		t.Errorf("hash version %q, want %q", got, v1alpha1.HashVersion)
	}
	if claim.Annotations["example.com/team"] != "web" || len(pool.Spec.Template.ObjectMeta.Annotations) != 1 {
		t.Errorf("annotations %v: want the template's kept, and the pool's template left as it was", claim.Annotations)
	}
}
