package amifamily

import (
	"slices"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
)

// Select returns the first image whose requirements an instance type meets.
func Select(amis []v1alpha1.AMI, it *cloudprovider.InstanceType) (v1alpha1.AMI, bool) {
	for _, ami := range amis {
		if serves(ami.Requirements, it) {
			return ami, true
		}
	}
	return v1alpha1.AMI{}, false
}

// serves checks single-valued instance-type labels against AMI requirements.
func serves(reqs []v1alpha1.NodeSelectorRequirementWithMinValues, it *cloudprovider.InstanceType) bool {
	for _, r := range reqs {
		has := it.Requirements.Has(r.Key)
		value := ""
		if has {
			value = it.Requirements.Get(r.Key).Any()
		}
		ok := true
		switch r.Operator {
		case v1alpha1.OperatorIn:
			ok = has && slices.Contains(r.Values, value)
		case v1alpha1.OperatorNotIn:
			ok = !has || !slices.Contains(r.Values, value)
		case v1alpha1.OperatorExists:
			ok = has
		case v1alpha1.OperatorDoesNotExist:
			ok = !has
		}
		if !ok {
			return false
		}
	}
	return true
}
