package lifecycle

import (
	"errors"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
)

func TestLaunchFailureFollowsTheCloudProviderErrorContract(t *testing.T) {
	for _, tc := range []struct {
		err        error
		reason     string
		classified bool
	}{
		{cloudprovider.NewInsufficientCapacityError("short"), ReasonInsufficientCapacity, true},
		{fmt.Errorf("launching: %w", cloudprovider.NewInsufficientCapacityError("short")), ReasonInsufficientCapacity, true},
		{cloudprovider.NewNodeClassNotReadyError(errors.New("no subnets")), ReasonNodeClassNotReady, true},
		{cloudprovider.NewCreateError(errors.New("denied"), "UnauthorizedOperation", "may not"), "UnauthorizedOperation", true},
		{cloudprovider.NewCreateError(errors.New("odd"), "not a reason!", "odd"), "Unknown", true},
		{errors.New("connection reset"), ReasonLaunchError, false},
	} {
		reason, _, classified := launchFailure(tc.err)
		if reason != tc.reason || classified != tc.classified {
			t.Errorf("launchFailure(%v) = %s, %v; want %s, %v", tc.err, reason, classified, tc.reason, tc.classified)
		}
	}
}

func TestRegistrationTaintsLiftUnregisteredAndAddThePoolsOnce(t *testing.T) {
	dedicated := corev1.Taint{Key: "dedicated", Value: "a", Effect: corev1.TaintEffectNoSchedule}
	startup := corev1.Taint{Key: "agent", Effect: corev1.TaintEffectNoExecute}
	claim := &v1alpha1.NodeClaim{Spec: v1alpha1.NodeClaimSpec{Taints: []corev1.Taint{dedicated}}}
	pool := &v1alpha1.NodePool{}
	pool.Spec.Template.Spec.Taints = []corev1.Taint{dedicated}
	pool.Spec.Template.Spec.StartupTaints = []corev1.Taint{startup}
	got := registrationTaints([]corev1.Taint{v1alpha1.UnregisteredNoExecuteTaint, {Key: "kubelet", Effect: corev1.TaintEffectNoSchedule}}, claim, pool)
	want := []string{"kubelet:NoSchedule", "dedicated=a:NoSchedule", "agent:NoExecute"}
	if len(got) != len(want) {
		t.Fatalf("taints = %v, want %v", got, want)
	}
	for i := range got {
		if got[i].ToString() != want[i] {
			t.Errorf("taint %d = %s, want %s", i, got[i].ToString(), want[i])
		}
	}
}

func TestOnlyExtendedResourcesMustShowInAllocatable(t *testing.T) {
	for name, want := range map[corev1.ResourceName]bool{
		corev1.ResourceCPU:              false,
		corev1.ResourceEphemeralStorage: false,
		"hugepages-2Mi":                 false,
		"kubernetes.io/batch-cpu":       false,
		"nvidia.com/gpu":                true,
		"aws.amazon.com/neuron":         true,
	} {
		if got := isExtended(name); got != want {
			t.Errorf("isExtended(%s) = %v, want %v", name, got, want)
		}
	}
}
