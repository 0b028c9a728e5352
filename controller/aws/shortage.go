package aws

import (
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/awserrors"
	"github.com/stowage-dev/stowage/controller/aws/cache"
	"github.com/stowage-dev/stowage/controller/aws/instancetype"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
)

// markShort records what a fleet reported short. A full capacity reservation
// (a Capacity Block EC2 finds short of capacity, as it reports one beyond its
// count or outside its window) is counted as full until the next refresh. A vCPU quota error is about the
// account, not the offering: every candidate offering of the same quota class
// and capacity type in the catalogue would fail the same way, so all of them
// are marked and the next attempt goes to another class or capacity type.
func (c *CloudProvider) markShort(p *launchPlan, short []cloudprovider.UnavailableOffering, types []*cloudprovider.InstanceType) {
	for _, s := range short {
		id := p.reservations[s.InstanceType+"/"+s.Zone]
		if id != "" && (s.Reason == awserrors.CodeReservationCapacityExceeded || p.req.CapacityBlock && awserrors.IsCapacityCode(s.Reason)) {
			c.reservations.Exhausted(id)
			c.log.Debug("capacity reservation full", "instance_type", s.InstanceType, "zone", s.Zone, "capacity_reservation", id)
			continue
		}
		c.MarkOfferingUnavailable(s.InstanceType, s.Zone, s.CapacityType, s.Reason)
		if awserrors.IsQuotaCode(s.Reason) {
			c.markQuotaClass(s, types)
		}
	}
}

func (c *CloudProvider) markQuotaClass(s cloudprovider.UnavailableOffering, types []*cloudprovider.InstanceType) {
	if s.CapacityType == v1alpha1.CapacityTypeReserved {
		return // instances in a reservation do not draw on the quota
	}
	class := instancetype.QuotaClass(s.InstanceType)
	c.log.Warn("vCPU quota used up; request an increase in Service Quotas", "quota_class", class, "capacity_type", s.CapacityType,
		"instance_type", s.InstanceType, "reason", s.Reason)
	for _, it := range types {
		if it.Name == s.InstanceType || instancetype.QuotaClass(it.Name) != class {
			continue
		}
		for _, o := range it.Offerings {
			if o.CapacityType == s.CapacityType {
				c.unavailable.MarkUnavailable(cache.Offering{InstanceType: it.Name, Zone: o.Zone, CapacityType: o.CapacityType})
			}
		}
	}
}
