package lifecycle

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
)

// TestOfferingsLeftLooksOnlyAtWhatTheTypesDefine: a provisioned claim also
// requires its pool's label and the pool template's own labels, which no
// instance type defines; they must not make every offering look gone, or a
// shortage with offerings left would delete the claim.
func TestOfferingsLeftLooksOnlyAtWhatTheTypesDefine(t *testing.T) {
	infos := catalogue.Builtin()
	var m6i catalogue.Info
	for _, info := range infos {
		if info.Name == "m6i.large" {
			m6i = info
		}
	}
	types := catalogue.InstanceTypes([]catalogue.Info{m6i}, catalogue.DefaultOptions())
	claim := &v1alpha1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "web-abcde"}, Spec: v1alpha1.NodeClaimSpec{
		Requirements: []v1alpha1.NodeSelectorRequirementWithMinValues{
			{Key: v1alpha1.LabelNodePool, Operator: v1alpha1.OperatorIn, Values: []string{"web"}},
			{Key: "example.com/team", Operator: v1alpha1.OperatorIn, Values: []string{"search"}},
			{Key: corev1.LabelInstanceTypeStable, Operator: v1alpha1.OperatorIn, Values: []string{"m6i.large"}},
			{Key: v1alpha1.LabelCapacityType, Operator: v1alpha1.OperatorIn, Values: []string{v1alpha1.CapacityTypeOnDemand}},
		}}}
	if !anyOfferingLeft(types, claim) {
		t.Fatal("no offering left for a claim of a pool, with every m6i.large offering available")
	}
	markShort(types[0], v1alpha1.CapacityTypeOnDemand)
	if anyOfferingLeft(types, claim) {
		t.Fatal("an offering is left with every on-demand m6i.large offering short")
	}
	claim.Spec.Requirements[3].Values = append(claim.Spec.Requirements[3].Values, v1alpha1.CapacityTypeSpot)
	if !anyOfferingLeft(types, claim) {
		t.Fatal("no offering left for a claim that also allows spot, which is not short")
	}
}

func markShort(it *cloudprovider.InstanceType, capacityType string) {
	for i := range it.Offerings {
		if it.Offerings[i].CapacityType == capacityType {
			it.Offerings[i].Available = false
		}
	}
}
