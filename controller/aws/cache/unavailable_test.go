package cache_test

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/controller/aws/cache"
)

func TestShortageMemoryExpiry(t *testing.T) {
	o := cache.Offering{InstanceType: "g5.12xlarge", Zone: "us-east-1a", CapacityType: "spot"}
	type step struct {
		advance     time.Duration
		mark        bool
		clear       bool
		wantPenalty time.Duration // checked when mark
		wantShort   bool
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"one shortage is forgotten after the initial backoff", []step{
			{mark: true, wantPenalty: 30 * time.Second, wantShort: true},
			{advance: 29 * time.Second, wantShort: true},
			{advance: time.Second, wantShort: false},
		}},
		{"repeated shortages double the backoff up to the cap", []step{
			{mark: true, wantPenalty: 30 * time.Second, wantShort: true},
			{advance: 30 * time.Second, mark: true, wantPenalty: time.Minute, wantShort: true},
			{advance: time.Minute, mark: true, wantPenalty: 2 * time.Minute, wantShort: true},
			{advance: 2 * time.Minute, mark: true, wantPenalty: 4 * time.Minute, wantShort: true},
			{advance: 4 * time.Minute, mark: true, wantPenalty: 5 * time.Minute, wantShort: true},
			{advance: 5 * time.Minute, mark: true, wantPenalty: 5 * time.Minute, wantShort: true},
		}},
		{"a burst within the penalty counts once", []step{
			{mark: true, wantPenalty: 30 * time.Second, wantShort: true},
			{advance: 10 * time.Second, mark: true, wantPenalty: 20 * time.Second, wantShort: true},
			{advance: 20 * time.Second, wantShort: false},
		}},
		{"an offering that stays healthy starts over", []step{
			{mark: true, wantPenalty: 30 * time.Second, wantShort: true},
			{advance: 30 * time.Second, mark: true, wantPenalty: time.Minute, wantShort: true},
			{advance: 3 * time.Minute, mark: true, wantPenalty: 30 * time.Second, wantShort: true},
		}},
		{"a successful launch clears it", []step{
			{mark: true, wantPenalty: 30 * time.Second, wantShort: true},
			{clear: true, wantShort: false},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC))
			u := cache.NewUnavailable(clk, cache.Backoff{Initial: 30 * time.Second, Max: 5 * time.Minute})
			for i, s := range tc.steps {
				clk.Step(s.advance)
				if s.clear {
					u.MarkAvailable(o)
				}
				if s.mark {
					if got := u.MarkUnavailable(o); got != s.wantPenalty {
						t.Fatalf("step %d: penalty %v, want %v", i, got, s.wantPenalty)
					}
				}
				if got := u.IsUnavailable(o); got != s.wantShort {
					t.Fatalf("step %d: unavailable = %v, want %v", i, got, s.wantShort)
				}
			}
		})
	}
}

func TestNextExpiryAndSeq(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC))
	u := cache.NewUnavailable(clk, cache.DefaultBackoff)
	if !u.NextExpiry().IsZero() || u.Seq() != 0 {
		t.Fatalf("empty memory: next expiry %v seq %d", u.NextExpiry(), u.Seq())
	}
	u.MarkUnavailable(cache.Offering{InstanceType: "m6i.large", Zone: "a", CapacityType: "spot"})
	if want := clk.Now().Add(30 * time.Second); !u.NextExpiry().Equal(want) || u.Seq() != 1 {
		t.Fatalf("next expiry %v seq %d, want %v and 1", u.NextExpiry(), u.Seq(), want)
	}
}

func TestRecentShortagesCountSpellsNotReports(t *testing.T) {
	o := cache.Offering{InstanceType: "c7i.xlarge", Zone: "us-east-1a", CapacityType: "spot"}
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC))
	u := cache.NewUnavailable(clk, cache.DefaultBackoff)
	steps := []struct {
		advance time.Duration
		mark    bool
		launch  bool
		want    int
	}{
		{want: 0},
		{mark: true, want: 1},
		// A storm: the provisioner tries again each time the backoff lapses.
		{advance: 5 * time.Minute, mark: true, want: 1},
		{advance: 20 * time.Minute, mark: true, want: 1},
		// It launches: the spell ends, and still counts for an hour after
		// its last report.
		{advance: 15 * time.Minute, launch: true, want: 1},
		// Short again after a launch: a second spell, a flapping offering.
		{advance: 10 * time.Minute, mark: true, want: 2},
		// The first spell's last report was at 25m: it leaves the window at 1h25m.
		{advance: 34 * time.Minute, want: 2},
		{advance: time.Minute, want: 1},
		{advance: 50 * time.Minute, want: 0},
		// A report an hour after the last starts a spell of its own.
		{mark: true, want: 1},
	}
	for i, s := range steps {
		clk.Step(s.advance)
		if s.launch {
			u.MarkAvailable(o)
		}
		if s.mark {
			u.MarkUnavailable(o)
		}
		if got := u.RecentShortages(o); got != s.want {
			t.Fatalf("step %d (%s): %d recent shortages, want %d", i, clk.Now().Format("15:04"), got, s.want)
		}
	}
}

func TestNextExpiryIncludesAShortageLeavingTheWindow(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC))
	u := cache.NewUnavailable(clk, cache.DefaultBackoff)
	o := cache.Offering{InstanceType: "m6i.large", Zone: "a", CapacityType: "spot"}
	u.MarkUnavailable(o)
	u.MarkAvailable(o)
	if want := clk.Now().Add(cache.ShortageWindow); !u.NextExpiry().Equal(want) {
		t.Fatalf("next expiry %v, want %v: the list of offerings must be rebuilt when the shortage stops counting", u.NextExpiry(), want)
	}
}
