package e2e_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/capacityreservation"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testbed"
)

// The block's window on the bed, in real time: it starts blockStartsIn
// after the bed is up; the pool's lead time leaves blockLaunchWindow of it
// to launch into, then blockLeaveWindow for its node to leave before EC2
// takes the instance back (30 minutes before the end).
const (
	blockStartsIn     = 2 * time.Minute
	blockLaunchWindow = 3 * time.Minute
	blockLeaveWindow  = 2 * time.Minute
)

// TestCapacityBlockWindowOnTheBed: a pool on g5.12xlarge, reserved first
// then on-demand, and a NodeClass selecting a block of one g5.12xlarge.
// Before the block starts a pod launches on-demand; from its start a pod
// launches into it; at its end less the pool's lead time the node leaves
// the block, its pod running again on on-demand, before EC2 takes the
// instance back; and no instance ever runs in the block outside its window.
func TestCapacityBlockWindowOnTheBed(t *testing.T) {
	const ns = "blocks"
	b := startBed(t, testbed.Options{InstanceTypes: awsemu.BuiltinCatalogue()})
	lead := awsemu.BlockTerminationLead + blockLeaveWindow
	start := b.Emulator.Clock().Now().Add(blockStartsIn)
	end := start.Add(blockLaunchWindow + lead)
	reclaimAt := end.Add(-awsemu.BlockTerminationLead)
	block := b.Emulator.AddCapacityBlock("g5.12xlarge", b.Emulator.Zones()[0].Name, 1, start, end, nil)

	nc := nodeClass()
	nc.Spec.CapacityReservationSelectorTerms = []v1alpha1.CapacityReservationSelectorTerm{{ID: block}}
	np := onDemandPool(poolName, 0, "g5.12xlarge")
	np.Spec.Template.Spec.Requirements[0].Values = []string{v1alpha1.CapacityTypeReserved, v1alpha1.CapacityTypeOnDemand}
	np.Spec.CapacityBlockLeadTime = &metav1.Duration{Duration: lead}
	b.create(nc, np, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	r := b.startReplica("blocks", replicaOptions{releaseOnCancel: true})
	b.waitElected(r, 30*time.Second)

	b.create(deployment(ns, "early", 1, "30")) // one pod per g5.12xlarge (48 vCPU)
	b.eventually(bootSettle, b.running(ns, "early", 1))
	if b.Emulator.Clock().Now().After(start) {
		t.Fatal("the early pod ran only after the block started (a loaded machine?): the test cannot tell a launch before the start")
	}
	b.eventually(blockStartsIn+settle, func() error {
		if n := testutil.ToFloat64(capacityreservation.Available.WithLabelValues(block, v1alpha1.CapacityReservationTypeCapacityBlock,
			"g5.12xlarge", b.Emulator.Zones()[0].Name)); n != 1 {
			return fmt.Errorf("stowage_capacity_reservations_available of the block is %v, want 1 once it started", n)
		}
		return nil
	})
	b.create(deployment(ns, "late", 1, "30"))
	b.eventually(blockLaunchWindow, func() error {
		if b.blockEmpty(block)() == nil {
			return fmt.Errorf("nothing launched into block %s for the late pod", block)
		}
		return nil
	})
	b.eventually(time.Until(reclaimAt), b.blockEmpty(block))
	if now := b.Emulator.Clock().Now(); !now.Before(reclaimAt) {
		t.Fatalf("the block's node left at %s, not before EC2 took it back at %s", now.Format(time.TimeOnly), reclaimAt.Format(time.TimeOnly))
	}
	b.eventually(bootSettle, b.running(ns, "late", 1))
	b.eventually(settle, b.inBlock(ns, "late", ""))
	for _, in := range b.Emulator.Instances() {
		if in.ReservationID == block && (in.LaunchTime.Before(start) || !in.LaunchTime.Before(end.Add(-lead))) {
			t.Errorf("instance %s launched into the block at %s, outside its window [%s, %s)", in.ID,
				in.LaunchTime.Format(time.TimeOnly), start.Format(time.TimeOnly), end.Add(-lead).Format(time.TimeOnly))
		}
		if in.ReservationID != block && in.InstanceType == "g5.12xlarge" && in.CapacityType != awsemu.CapacityOnDemand {
			t.Errorf("instance %s is %s outside the block, want on-demand", in.ID, in.CapacityType)
		}
	}
}

// inBlock checks that app's one pod runs on a node whose claim launched into
// the reservation (none for "").
func (b *bed) inBlock(ns, app, reservation string) func() error {
	return func() error {
		if err := b.running(ns, app, 1)(); err != nil {
			return err
		}
		pods, err := b.pods(ns, app)
		if err != nil {
			return err
		}
		for _, p := range pods {
			var node corev1.Node
			if err := b.Admin.Get(context.Background(), client.ObjectKey{Name: p.Spec.NodeName}, &node); err != nil {
				return err
			}
			if got := node.Labels[v1alpha1.LabelCapacityReservationID]; p.DeletionTimestamp == nil && got != reservation {
				return fmt.Errorf("pod %s runs on node %s in reservation %q, want %q", p.Name, node.Name, got, reservation)
			}
		}
		return nil
	}
}

// blockEmpty checks that no instance of the block is pending or running.
func (b *bed) blockEmpty(block string) func() error {
	return func() error {
		for _, in := range b.Emulator.Instances() {
			if in.ReservationID == block && (in.State == awsemu.StatePending || in.State == awsemu.StateRunning) {
				return fmt.Errorf("instance %s is still %s in the block", in.ID, in.State)
			}
		}
		return nil
	}
}
