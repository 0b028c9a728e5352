package cloudprovider_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stowage-dev/stowage/controller/cloudprovider"
)

func TestTypedErrors(t *testing.T) {
	base := errors.New("cause")
	cases := []struct {
		name   string
		err    error
		is     func(error) bool
		ignore func(error) error
	}{
		{"insufficient capacity", cloudprovider.NewInsufficientCapacityError("short", cloudprovider.UnavailableOffering{InstanceType: "m6i.large"}),
			cloudprovider.IsInsufficientCapacityError, cloudprovider.IgnoreInsufficientCapacityError},
		{"not found", cloudprovider.NewNodeClaimNotFoundError(base), cloudprovider.IsNodeClaimNotFoundError, cloudprovider.IgnoreNodeClaimNotFoundError},
		{"class not ready", cloudprovider.NewNodeClassNotReadyError(base), cloudprovider.IsNodeClassNotReadyError, cloudprovider.IgnoreNodeClassNotReadyError},
		{"create", cloudprovider.NewCreateError(base, "Reason", "msg"), cloudprovider.IsCreateError, cloudprovider.IgnoreCreateError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wrapped := fmt.Errorf("launching: %w", tc.err)
			if !tc.is(wrapped) || tc.ignore(wrapped) != nil {
				t.Fatalf("wrapped %v not recognised", wrapped)
			}
			if tc.is(base) || tc.ignore(base) != base {
				t.Fatalf("plain error recognised as %s", tc.name)
			}
		})
	}
}
