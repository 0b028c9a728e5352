package fake_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/cloudprovider/fake"
)

func TestFakeLaunchesCheapestAndDeletes(t *testing.T) {
	infos := catalogue.Builtin()[:20]
	f := fake.New(catalogue.InstanceTypes(infos, catalogue.DefaultOptions())...)
	ctx := context.Background()
	claim := &v1alpha1.NodeClaim{Spec: v1alpha1.NodeClaimSpec{Requirements: []v1alpha1.NodeSelectorRequirementWithMinValues{
		{Key: v1alpha1.LabelCapacityType, Operator: v1alpha1.OperatorIn, Values: []string{"on-demand"}}}}}
	got, err := f.Create(ctx, claim)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if got.Labels[v1alpha1.LabelCapacityType] != "on-demand" || got.Labels[corev1.LabelInstanceTypeStable] == "" {
		t.Fatalf("labels %v", got.Labels)
	}
	if err := f.Delete(ctx, got); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if err := f.Delete(ctx, got); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Fatalf("second Delete: %v, want not found", err)
	}
	if len(f.CreateCalls) != 1 || len(f.DeleteCalls) != 2 {
		t.Fatalf("recorded %d creates, %d deletes", len(f.CreateCalls), len(f.DeleteCalls))
	}
}
