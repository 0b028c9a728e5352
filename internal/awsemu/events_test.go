package awsemu_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

// TestServiceEventsHaveTheShapeOfAWSs: every event the emulator raises as
// an AWS service has the fields (and JSON types) of AWS's own sample of it,
// the real events in lambda/testdata (provenance in its README), with the
// instance named where AWS names it.
func TestServiceEventsHaveTheShapeOfAWSs(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC))
	cfg := awsemu.DefaultConfig()
	cfg.Clock, cfg.PendingDelay = clk, 0
	e := awsemu.New(cfg)
	var events []awsemu.Event
	e.SetEventSink(awsemu.SinkFunc(func(ev awsemu.Event) { events = append(events, ev) }))
	w := newWorld(t, e)
	spot, reserved, other := w.launch(t, awsemu.CapacitySpot), w.reserved(t), w.launch(t, awsemu.CapacitySpot)
	zone := w.zone
	for _, tc := range []struct {
		sample, instance, resource string
		raise                      func() error
	}{
		{"spot-interruption-terminate.json", spot, "arn:aws:ec2:" + zone + ":instance/" + spot, func() error { return e.Interrupt(spot) }},
		{"rebalance-recommendation.json", other, "arn:aws:ec2:" + zone + ":instance/" + other, func() error { return e.Rebalance(other) }},
		{"capacity-reservation-interruption.json", reserved, "arn:aws:ec2:us-east-1:123456789012:instance/" + reserved,
			func() error { return e.InterruptReserved(reserved) }},
		{"health-scheduled-change-retirement.json", other, other, func() error {
			return e.ScheduleChange(awsemu.ScheduledChange{EventTypeCode: "AWS_EC2_PERSISTENT_INSTANCE_RETIREMENT_SCHEDULED",
				Start: clk.Now().Add(72 * time.Hour), End: clk.Now().Add(96 * time.Hour), InstanceIDs: []string{other}})
		}},
		{"state-change-shutting-down.json", other, "arn:aws:ec2:us-east-1:123456789012:instance/" + other, func() error {
			_, err := e.Terminate(other)
			return err
		}},
	} {
		events = nil
		if err := tc.raise(); err != nil {
			t.Fatalf("%s: %v", tc.sample, err)
		}
		if len(events) != 1 {
			t.Fatalf("%s: %d events raised, want 1", tc.sample, len(events))
		}
		got, want := asJSON(t, events[0]), awsemu.ReadLambdaSample(t, tc.sample)
		sameShape(t, tc.sample, got, want)
		for _, k := range []string{"source", "detail-type", "version"} {
			if got[k] != want[k] {
				t.Errorf("%s: %s = %v, want %v", tc.sample, k, got[k], want[k])
			}
		}
		if res := got["resources"].([]any); len(res) != 1 || res[0] != tc.resource {
			t.Errorf("%s: resources %v, want [%s]", tc.sample, res, tc.resource)
		}
		if !strings.Contains(string(events[0].Detail), `"`+tc.instance+`"`) {
			t.Errorf("%s: the detail %s does not name %s", tc.sample, events[0].Detail, tc.instance)
		}
	}
	clk.Step(cfg.InterruptionNotice)
	for _, id := range []string{spot, reserved} {
		if in, _ := e.Instance(id); in.State != awsemu.StateShuttingDown && in.State != awsemu.StateTerminated {
			t.Errorf("%s is %s after the notice, want it shutting down", id, in.State)
		}
	}
}

// TestServiceEventsNameLiveInstancesOnly: AWS warns about instances it runs:
// an unknown or terminated instance, a spot warning for an on-demand
// instance and a reservation warning outside a reservation are refused.
func TestServiceEventsNameLiveInstancesOnly(t *testing.T) {
	cfg := awsemu.DefaultConfig()
	cfg.PendingDelay, cfg.ShuttingDownDelay = 0, 0
	e := awsemu.New(cfg)
	w := newWorld(t, e)
	reserved, gone := w.reserved(t), w.launch(t, awsemu.CapacitySpot)
	if _, err := e.Terminate(gone); err != nil {
		t.Fatal(err)
	}
	change := func(id string) func() error {
		return func() error {
			return e.ScheduleChange(awsemu.ScheduledChange{EventTypeCode: "AWS_EC2_INSTANCE_REBOOT_MAINTENANCE_SCHEDULED", Start: time.Now(), InstanceIDs: []string{id}})
		}
	}
	for name, raise := range map[string]func() error{
		"a spot warning for an unknown instance":    func() error { return e.Interrupt("i-0123456789abcdef0") },
		"a spot warning for a terminated instance":  func() error { return e.Interrupt(gone) },
		"a spot warning for an on-demand instance":  func() error { return e.Interrupt(reserved) },
		"a rebalance for a terminated instance":     func() error { return e.Rebalance(gone) },
		"a reservation warning outside one":         func() error { return e.InterruptReserved(gone) },
		"a scheduled change of an unknown instance": change("i-0123456789abcdef0"),
		"a scheduled change without an instance":    change(""),
	} {
		if err := raise(); err == nil {
			t.Errorf("%s: raised, want an error", name)
		}
	}
}

// world is a network, images and a launch template to launch instances
// with, in process.
type world struct {
	e            *awsemu.Emulator
	subnet, zone string
	template     string
}

func newWorld(t *testing.T, e *awsemu.Emulator) world {
	t.Helper()
	subnets, _ := e.SeedDefaultNetwork("c")
	var image string
	for _, id := range e.SeedEKSImages("1.37") {
		image = id
	}
	lt := e.AddLaunchTemplate(awsemu.LaunchTemplate{Name: "world", ImageID: image})
	w := world{e: e, subnet: subnets[0], template: lt}
	w.zone = w.instance(t, w.launch(t, awsemu.CapacityOnDemand)).Zone
	return w
}

func (w world) launch(t *testing.T, capacityType string) string {
	t.Helper()
	res, err := w.e.CreateFleet(awsemu.FleetRequest{CapacityType: capacityType, TotalTargetCapacity: 1,
		Overrides: []awsemu.FleetOverride{{LaunchTemplateID: w.template, InstanceType: "m6i.large", SubnetID: w.subnet}}})
	if err != nil || len(res.Instances) != 1 {
		t.Fatalf("launching a %s instance: %+v, %v", capacityType, res, err)
	}
	return res.Instances[0].InstanceIDs[0]
}

func (w world) instance(t *testing.T, id string) awsemu.Instance {
	t.Helper()
	in, ok := w.e.Instance(id)
	if !ok {
		t.Fatalf("no instance %s", id)
	}
	return in
}

// reserved launches an on-demand instance into an open capacity reservation.
func (w world) reserved(t *testing.T) string {
	t.Helper()
	w.e.AddCapacityReservation(awsemu.CapacityReservation{InstanceType: "m6i.large", Zone: w.zone, TotalInstanceCount: 1})
	id := w.launch(t, awsemu.CapacityOnDemand)
	if w.instance(t, id).ReservationID == "" {
		t.Fatalf("%s launched outside the reservation", id)
	}
	return id
}

func asJSON(t *testing.T, v any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameShape checks that got has every field of want, of the same JSON type,
// down through objects and the first element of arrays.
func sameShape(t *testing.T, at string, got, want any) {
	t.Helper()
	if reflect.TypeOf(got) != reflect.TypeOf(want) {
		t.Errorf("%s: %T, want %T as in AWS's event", at, got, want)
		return
	}
	switch w := want.(type) {
	case map[string]any:
		g := got.(map[string]any)
		for k, v := range w {
			if _, ok := g[k]; !ok {
				t.Errorf("%s: no field %q, which AWS's event has", at, k)
				continue
			}
			sameShape(t, at+"."+k, g[k], v)
		}
	case []any:
		g := got.([]any)
		if len(w) > 0 && len(g) > 0 {
			sameShape(t, fmt.Sprintf("%s[0]", at), g[0], w[0])
		}
	}
}
