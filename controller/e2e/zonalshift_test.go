package e2e_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/arczonalshift"
	"github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	stowaws "github.com/stowage-dev/stowage/controller/aws"
	"github.com/stowage-dev/stowage/internal/testbed"
)

// TestZonalShiftKeepsLaunchesOutOfTheZoneOnTheBed: with an ARC zonal shift
// of the bed's cluster away from its first zone, started through the real
// ARC client before the controller starts, pods that prefer that zone (and allow a
// second) launch only in the second, stowage_aws_zonal_shift_active says so,
// and a pod that may run only in the zone pends with a FailedScheduling event
// naming the shift; once the shift is cancelled and the controller has read that (every
// 30 s), pods that prefer the zone, and the pinned one, launch there again.
func TestZonalShiftKeepsLaunchesOutOfTheZoneOnTheBed(t *testing.T) {
	const ns = "shift"
	b := startBed(t, testbed.Options{})
	zones := b.Emulator.Zones()
	shifted, other := zones[0], zones[1]
	arn := "arn:aws:eks:" + testbed.Region + ":123456789012:cluster/" + b.Cluster
	arc := b.Clients.ARC.(*arczonalshift.Client) // the administrator's
	shift, err := arc.StartZonalShift(t.Context(), &arczonalshift.StartZonalShiftInput{ResourceIdentifier: awssdk.String(arn),
		AwayFrom: awssdk.String(shifted.ID), ExpiresIn: awssdk.String("1h"), Comment: awssdk.String("e2e: " + shifted.Name + " impaired")})
	if err != nil {
		t.Fatal(err)
	}
	b.create(nodeClass(), onDemandPool(poolName, 0), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	r := b.startReplica("shift", replicaOptions{releaseOnCancel: true})
	b.waitElected(r, 30*time.Second)

	b.create(preferringZone(ns, "during", shifted.Name, other.Name), pinnedTo(ns, "pinned", shifted.Name))
	b.eventually(settle, b.running(ns, "during", 2))
	b.eventually(settle, b.pendingFor(ns, "pinned", "zone "+shifted.Name+": zonal shift away from "+shifted.ID+": zonal shift "+awssdk.ToString(shift.ZonalShiftId)))
	if zs := b.instanceZones(); len(zs[shifted.Name]) > 0 || len(zs[other.Name]) == 0 {
		t.Fatalf("instances by zone %v during the shift away from %s, want them all in %s", zs, shifted.Name, other.Name)
	}

	gauge := stowaws.ZonalShiftActive.WithLabelValues(shifted.ID)
	if v := testutil.ToFloat64(gauge); v != 1 {
		t.Errorf("stowage_aws_zonal_shift_active{zone_id=%q} = %v during the shift, want 1", shifted.ID, v)
	}
	if _, err := arc.CancelZonalShift(t.Context(), &arczonalshift.CancelZonalShiftInput{ZonalShiftId: shift.ZonalShiftId}); err != nil {
		t.Fatal(err)
	}
	b.eventually(time.Minute, func() error { // the controller's next read of the shifts
		if v := testutil.ToFloat64(gauge); v != 0 {
			return fmt.Errorf("stowage_aws_zonal_shift_active{zone_id=%q} = %v, want 0 once the shift is cancelled", shifted.ID, v)
		}
		return nil
	})
	b.create(preferringZone(ns, "after", shifted.Name, other.Name))
	b.eventually(settle, b.running(ns, "after", 2))
	b.eventually(settle, b.running(ns, "pinned", 1))
	if zs := b.instanceZones(); len(zs[shifted.Name]) == 0 {
		t.Errorf("instances by zone %v after the shift ended, want the pods that prefer %s there", zs, shifted.Name)
	}
}

// preferringZone is a deployment of two pods that may run in either zone
// and prefer the first.
func preferringZone(ns, app, preferred, allowed string) *appsv1.Deployment {
	d := deployment(ns, app, 2, "1500m")
	d.Spec.Template.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn,
				Values: []string{preferred, allowed}}}}}},
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 100, Preference: corev1.NodeSelectorTerm{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn,
				Values: []string{preferred}}}}}},
	}}
	return d
}

// pinnedTo is a deployment of one pod that may run only in the zone.
func pinnedTo(ns, app, zone string) *appsv1.Deployment {
	d := deployment(ns, app, 1, "500m")
	d.Spec.Template.Spec.NodeSelector = map[string]string{corev1.LabelTopologyZone: zone}
	return d
}

// pendingFor checks that Stowage's FailedScheduling event for every pending
// pod of app says why.
func (b *bed) pendingFor(ns, app, why string) func() error {
	return func() error {
		pods, events, err := b.podsAndEvents(ns, app)
		if err != nil {
			return err
		}
		for _, p := range pods {
			if p.Spec.NodeName != "" {
				return fmt.Errorf("pod %s runs on %s, want it pending", p.Name, p.Spec.NodeName)
			}
			if !slices.ContainsFunc(events, func(e eventsv1.Event) bool {
				return e.Regarding.Name == p.Name && e.Reason == "FailedScheduling" && e.Action == "Provision" && strings.Contains(e.Note, why)
			}) {
				return fmt.Errorf("pod %s: no FailedScheduling event from Stowage saying %q yet", p.Name, why)
			}
		}
		if len(pods) == 0 {
			return fmt.Errorf("no pod of %s yet", app)
		}
		return nil
	}
}

// instanceZones lists the live instances' IDs by zone.
func (b *bed) instanceZones() map[string][]string {
	out := map[string][]string{}
	for _, in := range b.Emulator.Instances() {
		if live(in) {
			out[in.Zone] = append(out[in.Zone], in.ID)
		}
	}
	return out
}
