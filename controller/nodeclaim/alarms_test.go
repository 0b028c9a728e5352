package nodeclaim_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stowage-dev/stowage/controller/nodeclaim"
)

func request(name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Name: name}}
}

func newQueue(t *testing.T) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	t.Cleanup(q.ShutDown)
	return q
}

// waitLen polls until the queue holds want requests.
func waitLen(t *testing.T, q workqueue.TypedRateLimitingInterface[reconcile.Request], want int) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return q.Len() == want, nil
	})
	if err != nil {
		t.Fatalf("queue holds %d requests, want %d", q.Len(), want)
	}
}

func TestAlarmFiresWhenTheClockReachesIt(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	alarms, q := nodeclaim.NewAlarms(clk), newQueue(t)
	if err := alarms.Start(t.Context(), q); err != nil {
		t.Fatal(err)
	}
	alarms.Set(request("a"), clk.Now().Add(time.Minute))
	clk.Step(59 * time.Second)
	if q.Len() != 0 || alarms.Pending() != 1 {
		t.Fatalf("alarm fired a second early: queue %d, pending %d", q.Len(), alarms.Pending())
	}
	clk.Step(time.Second)
	waitLen(t, q, 1)
	if got, _ := q.Get(); got != request("a") {
		t.Errorf("queued %v, want a", got)
	}
	if alarms.Pending() != 0 {
		t.Errorf("%d alarms pending after firing, want 0", alarms.Pending())
	}
}

func TestEarlierAlarmWinsAndDueAlarmFiresAtOnce(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	alarms, q := nodeclaim.NewAlarms(clk), newQueue(t)
	alarms.Set(request("before-start"), clk.Now().Add(-time.Second))
	if err := alarms.Start(t.Context(), q); err != nil {
		t.Fatal(err)
	}
	waitLen(t, q, 1) // set before Start, already due: delivered on Start
	item, _ := q.Get()
	q.Done(item)

	alarms.Set(request("b"), clk.Now().Add(10*time.Minute))
	alarms.Set(request("b"), clk.Now().Add(time.Minute))
	alarms.Set(request("b"), clk.Now().Add(20*time.Minute)) // later than pending: ignored
	clk.Step(time.Minute)
	waitLen(t, q, 1)
	if alarms.Pending() != 0 {
		t.Errorf("%d alarms pending after the earliest fired, want 0", alarms.Pending())
	}
}

// An unstarted source is driven by its caller: Next says when, Due delivers.
func TestAlarmsDrivenByTheCaller(t *testing.T) {
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	alarms := nodeclaim.NewAlarms(clocktesting.NewFakeClock(start))
	if _, ok := alarms.Next(); ok {
		t.Fatal("an alarm without any set")
	}
	alarms.Set(request("b"), start.Add(2*time.Minute))
	alarms.Set(request("a"), start.Add(time.Minute))
	if at, ok := alarms.Next(); !ok || !at.Equal(start.Add(time.Minute)) {
		t.Fatalf("next alarm %v %v, want in a minute", at, ok)
	}
	if got := alarms.Due(start.Add(59 * time.Second)); len(got) != 0 {
		t.Fatalf("due early: %v", got)
	}
	if got := alarms.Due(start.Add(2 * time.Minute)); len(got) != 2 || got[0] != request("a") || got[1] != request("b") {
		t.Fatalf("due %v, want a then b", got)
	}
	if alarms.Pending() != 0 {
		t.Errorf("%d alarms pending after delivery, want 0", alarms.Pending())
	}
}
