package provisioning

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// TestTriggersDuringAWindowLeaveNoToken checks that a trigger that came while
// a window was open does not open the next window by itself.
func TestTriggersDuringAWindowLeaveNoToken(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	b := NewBatcher(clk, BatcherOptions{})
	b.Trigger()
	<-b.wake // what Wait does first
	b.Trigger()
	b.Trigger()
	clk.Step(time.Second)
	if _, closed := b.remaining(); !closed {
		t.Fatal("the window is still open after a second without triggers")
	}
	if len(b.wake) != 0 || b.open {
		t.Fatalf("after the window closed: %d tokens, open %v", len(b.wake), b.open)
	}
}
