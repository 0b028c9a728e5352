package state_test

import (
	"fmt"
	"testing"
	"time"

	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/state/statetest"
)

// TestSnapshotsCarryTheClustersPriorityClasses: a PriorityClass created on
// the API server reaches the snapshot's values by name, and its deletion
// takes it out, so a pod the Priority admission did not rank is solved at
// its class's value.
func TestSnapshotsCarryTheClustersPriorityClasses(t *testing.T) {
	e := statetest.Start(t)
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "checkout"}, Value: 100000}
	if err := e.Client.Create(t.Context(), pc); err != nil {
		t.Fatal(err)
	}
	statetest.Eventually(t, 10*time.Second, func() error {
		if got := e.Cluster.Snapshot(nil, nil).PriorityClasses["checkout"]; got != 100000 {
			return fmt.Errorf("checkout is %d in the snapshot, want 100000", got)
		}
		return nil
	})
	if err := e.Client.Delete(t.Context(), pc); err != nil {
		t.Fatal(err)
	}
	statetest.Eventually(t, 10*time.Second, func() error {
		if _, ok := e.Cluster.Snapshot(nil, nil).PriorityClasses["checkout"]; ok {
			return fmt.Errorf("checkout is still in the snapshot after its deletion")
		}
		return nil
	})
}
