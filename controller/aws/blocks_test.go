package aws_test

import (
	"testing"
	"time"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowaws "github.com/stowage-dev/stowage/controller/aws"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

// sharedClock runs the emulator on the cloud provider's fake clock, so that
// a Capacity Block's window is the same instant to both.
func sharedClock(cfg *awsemu.Config, o *stowaws.Options) { cfg.Clock = o.Clock }

// TestCapacityBlockLaunches follows a block of two g5.12xlarge the NodeClass
// selects: before its start its offering has no room and a claim that
// allows reserved and on-demand launches on-demand; from its start two
// claims launch into it from capacity-block fleets (the template's market
// type and the fleet's target capacity type both capacity-block, which the
// emulator refuses otherwise), labelled with the block and its end; a third
// falls back to on-demand; and in its last 30 minutes nothing launches into
// it, though it has room again.
func TestCapacityBlockLaunches(t *testing.T) {
	e := newEnv(t, awsemu.SmallCatalogue(), 3, sharedClock)
	start := e.clk.Now().Add(time.Hour)
	end := start.Add(4 * time.Hour)
	block := e.emu.AddCapacityBlock("g5.12xlarge", reservedZone, 2, start, end, nil)
	e.nc.Spec.CapacityReservationSelectorTerms = []v1alpha1.CapacityReservationSelectorTerm{{ID: block}}
	cts := []string{v1alpha1.CapacityTypeReserved, v1alpha1.CapacityTypeOnDemand}

	o := blockOffering(t, e, block)
	if o.Available || o.ReservationType != v1alpha1.CapacityReservationTypeCapacityBlock || !o.ReservationStart.Equal(start) || !o.ReservationEnd.Equal(end) {
		t.Fatalf("before its start the block's offering is %+v, want unavailable with its window", o)
	}
	got, err := e.cp.Create(ctx(t), nodeClaim("early", []string{"g5.12xlarge"}, cts))
	expectLaunch(t, got, err, v1alpha1.CapacityTypeOnDemand, "")

	e.clk.SetTime(start)
	refresh(t, e)
	for _, name := range []string{"first", "second"} {
		got, err := e.cp.Create(ctx(t), nodeClaim(name, []string{"g5.12xlarge"}, cts))
		expectLaunch(t, got, err, v1alpha1.CapacityTypeReserved, block)
		if got.Labels[v1alpha1.LabelCapacityReservationType] != v1alpha1.CapacityReservationTypeCapacityBlock ||
			got.Annotations[v1alpha1.AnnotationCapacityReservationEnd] != end.Format(time.RFC3339) {
			t.Fatalf("claim %s: labels %v, annotations %v; want the block's type and end", name, got.Labels, got.Annotations)
		}
	}
	got, err = e.cp.Create(ctx(t), nodeClaim("third", []string{"g5.12xlarge"}, cts))
	expectLaunch(t, got, err, v1alpha1.CapacityTypeOnDemand, "")
	if r, _ := e.emu.CapacityReservation(block); r.AvailableInstanceCount != 0 {
		t.Fatalf("the block has room for %d after two launches, want 0", r.AvailableInstanceCount)
	}

	e.clk.SetTime(end.Add(-25 * time.Minute)) // EC2 has taken the block's instances back
	refresh(t, e)
	if r, _ := e.emu.CapacityReservation(block); r.AvailableInstanceCount != 2 {
		t.Fatalf("the block has room for %d once EC2 took its instances, want 2", r.AvailableInstanceCount)
	}
	fleets := e.emu.Calls("CreateFleet")
	got, err = e.cp.Create(ctx(t), nodeClaim("late", []string{"g5.12xlarge"}, cts))
	expectLaunch(t, got, err, v1alpha1.CapacityTypeOnDemand, "")
	if n := e.emu.Calls("CreateFleet") - fleets; n != 1 {
		t.Fatalf("%d fleets for a claim launched late in the block's window, want 1: none tried the block", n)
	}
}

// TestCapacityBlockOnly: a claim that allows only reserved capacity gets an
// insufficient capacity error before the block starts, not a launch.
func TestCapacityBlockOnly(t *testing.T) {
	e := newEnv(t, awsemu.SmallCatalogue(), 3, sharedClock)
	start := e.clk.Now().Add(time.Hour)
	block := e.emu.AddCapacityBlock("g5.12xlarge", reservedZone, 1, start, start.Add(time.Hour*3), nil)
	e.nc.Spec.CapacityReservationSelectorTerms = []v1alpha1.CapacityReservationSelectorTerm{{ID: block}}
	if _, err := e.cp.Create(ctx(t), nodeClaim("early", []string{"g5.12xlarge"}, []string{v1alpha1.CapacityTypeReserved})); !cloudprovider.IsInsufficientCapacityError(err) {
		t.Fatalf("a reserved-only claim before the block starts: %v, want insufficient capacity", err)
	}
	if n := e.emu.Calls("CreateFleet"); n != 0 {
		t.Fatalf("%d fleets before the block starts, want none", n)
	}
}

func blockOffering(t *testing.T, e *env, block string) cloudprovider.Offering {
	t.Helper()
	types, err := e.cp.InstanceTypes(ctx(t), nodePool("default"))
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range types {
		for _, o := range it.Offerings {
			if o.ReservationID == block {
				return o
			}
		}
	}
	t.Fatalf("no offering for block %s", block)
	return cloudprovider.Offering{}
}

func refresh(t *testing.T, e *env) {
	t.Helper()
	if err := e.cp.Refresh(ctx(t)); err != nil {
		t.Fatal(err)
	}
}

func expectLaunch(t *testing.T, got *v1alpha1.NodeClaim, err error, capacityType, reservation string) {
	t.Helper()
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if got.Labels[v1alpha1.LabelCapacityType] != capacityType || got.Labels[v1alpha1.LabelCapacityReservationID] != reservation {
		t.Fatalf("claim %s launched %s in reservation %q, want %s in %q", got.Name, got.Labels[v1alpha1.LabelCapacityType],
			got.Labels[v1alpha1.LabelCapacityReservationID], capacityType, reservation)
	}
}

// TestCapacityBlockTakenAtItsStart: the refresh loop wakes at a block's
// start, between its scheduled passes, so that the block's offering has
// room from its start rather than from the next refresh; the schedule of
// the passes stays as it was.
func TestCapacityBlockTakenAtItsStart(t *testing.T) {
	passes, done := make(chan pass), make(chan struct{})
	e := newEnv(t, awsemu.SmallCatalogue(), 3, sharedClock, withLoops(passes, done))
	start := e.clk.Now().Add(2 * time.Minute)
	block := e.emu.AddCapacityBlock("g5.12xlarge", reservedZone, 1, start, start.Add(3*time.Hour), nil)
	e.nc.Spec.CapacityReservationSelectorTerms = []v1alpha1.CapacityReservationSelectorTerm{{ID: block}}
	startLoops(t, e, passes, done)
	if o := blockOffering(t, e, block); o.Available {
		t.Fatalf("before its start the block's offering is available: %+v", o)
	}
	stepIdle(t, e, passes, 2*time.Minute-time.Second)
	eventually(t, "every loop to wait on the clock", func() bool { return e.clk.Waiters() == loopCount })
	e.clk.Step(time.Second)
	waitPasses(t, passes, stowaws.LoopRefresh)
	if o := blockOffering(t, e, block); !o.Available {
		t.Fatalf("at its start, before the next scheduled refresh, the block's offering has no room: %+v", o)
	}
	stepIdle(t, e, passes, refreshEvery-2*time.Minute-time.Second) // the scheduled pass is still 5 minutes after the first
	e.clk.Step(time.Second)
	waitPasses(t, passes, stowaws.LoopRefresh)
}
