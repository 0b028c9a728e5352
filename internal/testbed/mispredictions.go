package testbed

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/nodeclaim/lifecycle"
)

// CheckAllocatable is an error naming every AllocatableMismatch event
// Stowage wrote on the bed (Nodes whose allocatable, as the bed's kubelet
// computed it from the user data, is not what the solver planned their pods
// with), or nil. A bed that runs Stowage as installed has no other view of
// the controller's stowage_nodeclaims_allocatable_mismatch_total, so its
// tests end with this.
func (b *Bed) CheckAllocatable(ctx context.Context) error {
	var events corev1.EventList
	if err := b.Admin.List(ctx, &events, client.MatchingFields{"reason": lifecycle.ReasonAllocatableMismatch}); err != nil {
		return fmt.Errorf("listing AllocatableMismatch events: %w", err)
	}
	if len(events.Items) == 0 {
		return nil
	}
	var found []string
	for _, e := range events.Items {
		found = append(found, e.InvolvedObject.Kind+" "+e.InvolvedObject.Name+": "+e.Message)
	}
	sort.Strings(found)
	return fmt.Errorf("%d Node(s) registered another allocatable than Stowage predicted at launch (the solver, "+
		"controller/catalogue, and the bed's kubelet, internal/nodeboot, disagree): %v", len(found), found)
}
