package capacityblock_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/interruption"
	"github.com/stowage-dev/stowage/controller/nodeclaim/capacityblock"
	"github.com/stowage-dev/stowage/controller/nodeclaim/nodeclaimtest"
	"github.com/stowage-dev/stowage/internal/testenv"
)

func TestMain(m *testing.M) { nodeclaimtest.Main(m, testenv.Options{}) }

const settle = 20 * time.Second

// inBlock creates a claim launched now into a Capacity Block ending at end,
// and its node when withNode.
func inBlock(e *nodeclaimtest.Env, pool *v1alpha1.NodePool, name string, end time.Time, withNode bool) *v1alpha1.NodeClaim {
	e.T.Helper()
	claim := e.NodeClaim(name, pool)
	claim.Labels[v1alpha1.LabelCapacityReservationID] = "cr-0b10c0000000000a1"
	claim.Labels[v1alpha1.LabelCapacityReservationType] = v1alpha1.CapacityReservationTypeCapacityBlock
	claim.Annotations = map[string]string{v1alpha1.AnnotationCapacityReservationEnd: end.Format(time.RFC3339)}
	e.Create(claim)
	providerID := "aws:///us-east-1a/i-0" + fmt.Sprintf("%016x", len(name))
	e.UpdateStatus(claim, func() {
		claim.Status.ProviderID = providerID
		claim.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionLaunched, Status: metav1.ConditionTrue,
			Reason: v1alpha1.ConditionLaunched, LastTransitionTime: metav1.NewTime(e.Clock.Now())}}
	})
	if withNode {
		e.Create(e.Node(name, providerID))
	}
	return claim
}

// TestNodesLeaveABlockAheadOfItsEnd: a claim in a block ending in 3 hours,
// in a pool of lead time 90 minutes, is left alone until then; at 90
// minutes before the end its node carries the capacity-block-expiration
// mark due 30 minutes before the end, once. A claim whose node never
// registered is deleted instead.
func TestNodesLeaveABlockAheadOfItsEnd(t *testing.T) {
	e := nodeclaimtest.New(t)
	pool := e.NodePool(nil)
	pool.Spec.CapacityBlockLeadTime = &metav1.Duration{Duration: 90 * time.Minute}
	e.Create(pool)
	end := e.Clock.Now().Add(3 * time.Hour).Truncate(time.Second)
	claim := inBlock(e, pool, "gpu", end, true)
	orphan := inBlock(e, pool, "unregistered", end, false)
	ctrl := capacityblock.New(e.Clock, e.Mgr.GetClient(), capacityblock.Options{})
	if err := ctrl.Register(e.Mgr); err != nil {
		t.Fatal(err)
	}
	base := nodeclaimtest.CounterValue(t, capacityblock.Left.WithLabelValues(pool.Name))
	e.Start()
	e.Eventually(settle, func() error {
		if at, ok := ctrl.Alarms().Next(); !ok || !at.Equal(end.Add(-90*time.Minute)) {
			return fmt.Errorf("alarm %v %v, want the end less the lead time", at, ok)
		}
		return nil
	})
	node := e.Node("gpu", claim.Status.ProviderID)
	e.Clock.Step(89 * time.Minute)
	if err := e.Get(node); err != nil {
		t.Fatal(err)
	}
	if _, marked := interruption.Marks(node); marked {
		t.Fatalf("a minute before the lead time the node is marked")
	}
	e.Clock.Step(time.Minute)
	e.Eventually(settle, func() error {
		if err := e.Get(node); err != nil {
			return err
		}
		m, ok := interruption.Marks(node)
		if !ok || m.Kind != v1alpha1.InterruptionKindCapacityBlockExpiration || !m.Deadline.Equal(end.Add(-30*time.Minute)) {
			return fmt.Errorf("node mark %+v (%v), want capacity-block-expiration due 30 minutes before the end", m, ok)
		}
		return nil
	})
	e.Eventually(settle, func() error { return e.Gone(orphan) })
	e.ExpectCounter("capacity_block_ended_total", capacityblock.Left.WithLabelValues(pool.Name), base, 2)
}

// TestAnExtendedBlockIsReadFromItsNodeClass: the NodeClass's status says
// the block was extended by a day; the claim's node is not marked at the
// end it was launched with.
func TestAnExtendedBlockIsReadFromItsNodeClass(t *testing.T) {
	e := nodeclaimtest.New(t)
	pool := e.NodePool(nil)
	e.Create(pool)
	end := e.Clock.Now().Add(2 * time.Hour).Truncate(time.Second)
	nc := &v1alpha1.NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: v1alpha1.NodeClassSpec{
		AMISelectorTerms:           []v1alpha1.AMISelectorTerm{{Alias: "al2023@latest"}},
		SubnetSelectorTerms:        []v1alpha1.SelectorTerm{{Tags: map[string]string{"a": "b"}}},
		SecurityGroupSelectorTerms: []v1alpha1.SecurityGroupSelectorTerm{{Tags: map[string]string{"a": "b"}}}, Role: "r"}}
	e.Create(nc)
	e.UpdateStatus(nc, func() {
		nc.Status.CapacityReservations = []v1alpha1.CapacityReservation{{ID: "cr-0b10c0000000000a1", InstanceType: "g5.12xlarge",
			Zone: "us-east-1a", ReservationType: v1alpha1.CapacityReservationTypeCapacityBlock,
			StartTime: &metav1.Time{Time: end.Add(-time.Hour)}, EndTime: &metav1.Time{Time: end.Add(24 * time.Hour)}}}
	})
	inBlock(e, pool, "gpu", end, true)
	ctrl := capacityblock.New(e.Clock, e.Mgr.GetClient(), capacityblock.Options{})
	if err := ctrl.Register(e.Mgr); err != nil {
		t.Fatal(err)
	}
	e.Start()
	e.Eventually(settle, func() error {
		if at, ok := ctrl.Alarms().Next(); !ok || !at.Equal(end.Add(23*time.Hour)) {
			return fmt.Errorf("alarm %v %v, want the extended end less an hour", at, ok)
		}
		return nil
	})
}
