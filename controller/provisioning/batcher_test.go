package provisioning_test

import (
	"context"
	"errors"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/controller/provisioning"
	"github.com/stowage-dev/stowage/controller/state/statetest"
)

// window runs one Wait in the background on a fake clock.
type window struct {
	t    *testing.T
	clk  *clocktesting.FakeClock
	done chan bool
}

func newBatcher(opts provisioning.BatcherOptions) (*provisioning.Batcher, *clocktesting.FakeClock) {
	clk := clocktesting.NewFakeClock(statetest.Epoch)
	return provisioning.NewBatcher(clk, opts), clk
}

func wait(t *testing.T, ctx context.Context, b *provisioning.Batcher, clk *clocktesting.FakeClock) *window {
	w := &window{t: t, clk: clk, done: make(chan bool, 1)}
	go func() { w.done <- b.Wait(ctx) }()
	return w
}

// step advances the clock by d, then waits until Wait has either armed its
// next timer or returned, so that the next check sees a settled batcher.
func (w *window) step(d time.Duration) {
	w.t.Helper()
	w.clk.Step(d)
	w.settle()
}

func (w *window) settle() {
	w.t.Helper()
	statetest.Eventually(w.t, 5*time.Second, func() error {
		if w.clk.HasWaiters() || len(w.done) > 0 {
			return nil
		}
		return errTimerNotArmed
	})
}

var errTimerNotArmed = errors.New("the batcher has neither armed a timer nor returned")

func (w *window) expectOpen() {
	w.t.Helper()
	if len(w.done) > 0 {
		w.t.Fatalf("the window closed at %s", w.clk.Now().Sub(statetest.Epoch))
	}
}

func (w *window) expectClosed(want bool) {
	w.t.Helper()
	select {
	case got := <-w.done:
		if got != want {
			w.t.Fatalf("Wait returned %v, want %v", got, want)
		}
	case <-time.After(5 * time.Second):
		w.t.Fatalf("the window is still open at %s", w.clk.Now().Sub(statetest.Epoch))
	}
}

func TestWindowClosesAfterIdle(t *testing.T) {
	b, clk := newBatcher(provisioning.BatcherOptions{})
	b.Trigger()
	w := wait(t, t.Context(), b, clk)
	w.settle()
	w.step(999 * time.Millisecond)
	w.expectOpen()
	w.step(time.Millisecond)
	w.expectClosed(true)
}

func TestTriggersKeepTheWindowOpen(t *testing.T) {
	b, clk := newBatcher(provisioning.BatcherOptions{})
	b.Trigger()
	w := wait(t, t.Context(), b, clk)
	w.settle()
	w.step(600 * time.Millisecond)
	b.Trigger()
	w.step(400 * time.Millisecond)
	w.expectOpen()
	w.step(599 * time.Millisecond)
	w.expectOpen()
	w.step(time.Millisecond)
	w.expectClosed(true)
}

func TestMaxDurationClosesABusyWindow(t *testing.T) {
	b, clk := newBatcher(provisioning.BatcherOptions{IdleDuration: time.Second, MaxDuration: 10 * time.Second})
	b.Trigger()
	w := wait(t, t.Context(), b, clk)
	w.settle()
	for range 11 { // 9.9 s of triggers 0.9 s apart
		w.step(900 * time.Millisecond)
		w.expectOpen()
		b.Trigger()
	}
	w.step(100 * time.Millisecond)
	w.expectClosed(true)
}

func TestWindowsAreConfigurable(t *testing.T) {
	b, clk := newBatcher(provisioning.BatcherOptions{IdleDuration: 5 * time.Second})
	b.Trigger()
	w := wait(t, t.Context(), b, clk)
	w.settle()
	w.step(4 * time.Second)
	w.expectOpen()
	w.step(time.Second)
	w.expectClosed(true)
}

func TestTriggerAfterAWindowOpensTheNext(t *testing.T) {
	b, clk := newBatcher(provisioning.BatcherOptions{})
	b.Trigger()
	w := wait(t, t.Context(), b, clk)
	w.settle()
	b.Trigger() // during the window: belongs to it
	w.step(time.Second)
	w.expectClosed(true)

	clk.Step(time.Minute)
	b.Trigger()
	w = wait(t, t.Context(), b, clk)
	w.settle()
	w.step(999 * time.Millisecond)
	w.expectOpen()
	w.step(time.Millisecond)
	w.expectClosed(true)
}

func TestWaitEndsWithItsContext(t *testing.T) {
	b, clk := newBatcher(provisioning.BatcherOptions{})
	ctx, cancel := context.WithCancel(t.Context())
	w := wait(t, ctx, b, clk)
	cancel()
	w.expectClosed(false)

	ctx, cancel = context.WithCancel(t.Context())
	b.Trigger()
	w = wait(t, ctx, b, clk)
	w.settle()
	cancel()
	w.expectClosed(false)
}

func TestPollFollowsTheWindowWithoutBlocking(t *testing.T) {
	b, clk := newBatcher(provisioning.BatcherOptions{IdleDuration: time.Second, MaxDuration: 3 * time.Second})
	if closed, at := b.Poll(); closed || !at.IsZero() {
		t.Fatalf("no window open: Poll = %v, %v; want false and no closing time", closed, at)
	}
	b.Trigger()
	if closed, at := b.Poll(); closed || !at.Equal(clk.Now().Add(time.Second)) {
		t.Fatalf("fresh window: Poll = %v, %v; want open, closing in 1s", closed, at)
	}
	for range 4 { // triggers every 0.9s keep it open until the 3s maximum
		clk.Step(900 * time.Millisecond)
		b.Trigger()
	}
	if closed, _ := b.Poll(); !closed {
		t.Fatal("window still open after its maximum duration")
	}
	if closed, at := b.Poll(); closed || !at.IsZero() {
		t.Fatalf("after closing: Poll = %v, %v; want no window open", closed, at)
	}
}
