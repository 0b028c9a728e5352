package aws_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stowage-dev/stowage/controller/aws/awserrors"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

// TestAuthorisationFailuresNameTheAction denies one action at a time in the
// emulator: each call that needs it fails with an UnauthorizedError naming the
// action, inside the typed error the caller acts on (a CreateError for a
// launch, a NodeClassNotReadyError for resolution), with a condition reason and
// message ready for the NodeClaim or NodeClass.
func TestAuthorisationFailuresNameTheAction(t *testing.T) {
	create := func(e *env) error {
		_, err := e.cp.Create(ctx(t), nodeClaim("denied", []string{"m6i.large"}, []string{"on-demand"}))
		return err
	}
	cases := []struct {
		name    string
		fault   awsemu.Fault
		call    func(e *env) error
		typed   func(error) bool
		action  string
		message string // of the denial, when the test replaces AWS's
	}{
		{name: "launch", fault: awsemu.Fault{Action: "CreateFleet"}, call: create,
			typed: cloudprovider.IsCreateError, action: "ec2:CreateFleet"},
		{name: "launch template", fault: awsemu.Fault{Action: "CreateLaunchTemplate"}, call: create,
			typed: cloudprovider.IsCreateError, action: "ec2:CreateLaunchTemplate"},
		{name: "an EC2 denial that does not name the action", call: create, typed: cloudprovider.IsCreateError, action: "ec2:CreateFleet",
			fault: awsemu.Fault{Action: "CreateFleet", Message: "You are not authorized to perform this operation. Encoded authorization failure message: b64"}},
		{name: "instance profile", fault: awsemu.Fault{Action: "GetInstanceProfile"}, call: create,
			typed: cloudprovider.IsNodeClassNotReadyError, action: "iam:GetInstanceProfile"},
		{name: "image parameter", fault: awsemu.Fault{Action: "GetParameter"}, call: create,
			typed: cloudprovider.IsNodeClassNotReadyError, action: "ssm:GetParameter"},
		{name: "instance lookup", fault: awsemu.Fault{Action: "DescribeInstances"}, call: create,
			typed: cloudprovider.IsCreateError, action: "ec2:DescribeInstances"},
		{name: "prices", fault: awsemu.Fault{Action: "GetProducts"}, call: func(e *env) error { return e.cp.Refresh(ctx(t)) },
			typed: func(error) bool { return true }, action: "pricing:GetProducts"},
		{name: "capacity reservations", fault: awsemu.Fault{Action: "DescribeCapacityReservations"},
			call:  func(e *env) error { return e.cp.Refresh(ctx(t)) },
			typed: func(error) bool { return true }, action: "ec2:DescribeCapacityReservations"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, awsemu.SmallCatalogue(), 3)
			tc.fault.Kind = awsemu.FaultAccessDenied
			e.emu.Inject(tc.fault)
			err := tc.call(e)
			ue, ok := awserrors.AsUnauthorized(err)
			if !ok || !tc.typed(err) {
				t.Fatalf("error %v: want an UnauthorizedError inside the caller's typed error", err)
			}
			if ue.Action != tc.action || ue.Reason() != awserrors.ReasonUnauthorized || !strings.Contains(ue.Message(), tc.action) {
				t.Fatalf("action %q reason %q message %q; want %s named", ue.Action, ue.Reason(), ue.Message(), tc.action)
			}
			var ce *cloudprovider.CreateError
			if errorsAs(err, &ce) && (ce.Reason != awserrors.ReasonUnauthorized || ce.Message != ue.Message()) {
				t.Errorf("NodeClaim condition %s: %s; want %s: %s", ce.Reason, ce.Message, ue.Reason(), ue.Message())
			}
		})
	}
}

// TestDeniedReservationsLeaveTheCatalogue: without permission to list
// capacity reservations, instance types are still served, with no reserved offerings.
func TestDeniedReservationsLeaveTheCatalogue(t *testing.T) {
	e := newEnv(t, awsemu.SmallCatalogue(), 3)
	addReservation(e, 1, nil)
	e.emu.Inject(awsemu.Fault{Action: "DescribeCapacityReservations", Kind: awsemu.FaultAccessDenied})
	if got := reservedOfferings(t, e); len(got) != 0 {
		t.Fatalf("reserved offerings %+v without permission to list reservations, want none", got)
	}
	if _, err := e.cp.Create(ctx(t), nodeClaim("still", []string{"m6i.large"}, []string{"reserved", "on-demand"})); err != nil {
		t.Fatalf("Create: %v", err)
	}
}

func errorsAs(err error, target any) bool { return err != nil && errors.As(err, target) }
