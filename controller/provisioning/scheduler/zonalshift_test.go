package scheduler_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// A zone the cloud launches nothing into for a reason (a zonal shift) is
// named, with the reason, for a pod a DoNotSchedule zone spread leaves
// pending: the zone still counts as a domain (the spread's nodes there),
// but no node can be added to it.
func TestPodsAZoneSpreadLeavesPendingNameTheZonalShift(t *testing.T) {
	const why = "zonal shift away from use1-az1: zonal shift 0001 (az1 impaired)"
	web := withLabel("app", "web")
	s := snapshot(pods(3, "web", "1", "1Gi", web, spreadBy(zoneKey, 1, corev1.DoNotSchedule)), pool("default"))
	for i, zone := range []string{"us-east-1a", "us-east-1b", "us-east-1c"} {
		s.Nodes = append(s.Nodes, existingNode("node-"+zone, zone, "1", pods(1, "old"+string(rune('a'+i)), "1", "1Gi", web)...))
	}
	for _, it := range s.InstanceTypes["default"] {
		for j := range it.Offerings {
			if it.Offerings[j].Zone == "us-east-1a" {
				it.Offerings[j].Available, it.Offerings[j].UnavailableReason = false, why
			}
		}
	}
	r := solve(t, s, scheduler.Options{})
	if got := zones(r); got["us-east-1a"] != 0 || got["us-east-1b"] != 1 || got["us-east-1c"] != 1 {
		t.Errorf("new pods by zone %v, want one in each zone not shifted away from", got)
	}
	if len(r.Unschedulable) != 1 {
		t.Fatalf("%d pods pending, want the one the spread cannot place", len(r.Unschedulable))
	}
	if reason := r.Unschedulable[0].Reason; !strings.Contains(reason, "topology spread") || !strings.Contains(reason, "zone us-east-1a: "+why) {
		t.Errorf("reason %q, want the spread and the shifted zone with its shift", reason)
	}
}
