package v1alpha1_test

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

func TestFloorValidation(t *testing.T) {
	cases := []struct {
		name      string
		edit      func(*v1alpha1.NodePool)
		field, in string // empty field: valid
	}{
		{name: "a floor and the default lead time", edit: func(np *v1alpha1.NodePool) { np.Spec.MinNodes = ptr.To[int32](2) }},
		{name: "a floor at the nodes limit", edit: func(np *v1alpha1.NodePool) {
			np.Spec.MinNodes, np.Spec.Limits["nodes"] = ptr.To[int32](4), resource.MustParse("4")
		}},
		{name: "a floor above the nodes limit", field: "spec.minNodes", in: "nodes limit of 3", edit: func(np *v1alpha1.NodePool) {
			np.Spec.MinNodes, np.Spec.Limits["nodes"] = ptr.To[int32](4), resource.MustParse("3")
		}},
		{name: "a negative floor", field: "spec.minNodes", in: "between 0 and 1000", edit: func(np *v1alpha1.NodePool) { np.Spec.MinNodes = ptr.To[int32](-1) }},
		{name: "a lead time under EC2's 30 minutes", field: "spec.capacityBlockLeadTime", in: "at least 30m", edit: func(np *v1alpha1.NodePool) {
			np.Spec.CapacityBlockLeadTime = &metav1.Duration{Duration: 29 * time.Minute}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			np := validNodePool()
			tc.edit(np)
			errs := np.Validate()
			if tc.field == "" {
				if len(errs) > 0 {
					t.Fatalf("valid pool rejected: %v", errs)
				}
				return
			}
			if len(errs) != 1 || errs[0].Field != tc.field || !strings.Contains(errs[0].Error(), tc.in) {
				t.Fatalf("errors %v, want one on %s saying %q", errs, tc.field, tc.in)
			}
		})
	}
}

func TestFloorDefaults(t *testing.T) {
	np := validNodePool()
	if np.BlockLeadTime() != time.Hour || np.FloorNodes() != 0 {
		t.Fatalf("an unset pool leads by %s with a floor of %d, want 1h and 0", np.BlockLeadTime(), np.FloorNodes())
	}
	np.SetDefaults()
	if np.Spec.CapacityBlockLeadTime == nil || np.Spec.CapacityBlockLeadTime.Duration != time.Hour {
		t.Fatalf("defaults set the lead time to %v, want 1h as the CRD does", np.Spec.CapacityBlockLeadTime)
	}
}
