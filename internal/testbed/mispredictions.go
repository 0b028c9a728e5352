package testbed

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// AllocatableMismatches lists the AllocatableMismatch events Stowage wrote
// on the bed: Nodes whose allocatable, as the bed's kubelet computed it from
// the user data, is not what the solver planned their pods with. A bed that
// runs Stowage as installed has no other view of the controller's
// stowage_nodeclaims_allocatable_mismatch_total, so its tests end with this.
func (b *Bed) AllocatableMismatches(ctx context.Context) ([]string, error) {
	var events corev1.EventList
	if err := b.Admin.List(ctx, &events, client.MatchingFields{"reason": "AllocatableMismatch"}); err != nil {
		return nil, fmt.Errorf("listing AllocatableMismatch events: %w", err)
	}
	var out []string
	for _, e := range events.Items {
		out = append(out, e.InvolvedObject.Kind+" "+e.InvolvedObject.Name+": "+e.Message)
	}
	sort.Strings(out)
	return out, nil
}

// CheckAllocatable is an error naming every AllocatableMismatch event, or nil.
func (b *Bed) CheckAllocatable(ctx context.Context) error {
	found, err := b.AllocatableMismatches(ctx)
	if err != nil || len(found) == 0 {
		return err
	}
	return fmt.Errorf("%d Node(s) registered another allocatable than Stowage predicted at launch (the solver, "+
		"controller/catalogue, and the bed's kubelet, internal/nodeboot, disagree): %v", len(found), found)
}
