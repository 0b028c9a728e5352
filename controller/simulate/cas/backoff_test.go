package cas_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stowage-dev/stowage/controller/simulate/cas"
)

var gpu = group("gpu", "g5.12xlarge", withGPUs(resources("48", "192Gi"), 4), 4)

func TestBackoffDoublesUpToThirtyMinutes(t *testing.T) {
	w := newWorld()
	w.pending = pods("vllm", 1, "4", "16Gi", gpus(4))
	w.short["gpu/us-east-1a"] = true
	a := newAutoscaler(t, w, gpu, compute)
	acts := run(t, a, w, 100*time.Minute)
	want := []struct{ at, backoff time.Duration }{
		{0, 5 * time.Minute}, {5 * time.Minute, 10 * time.Minute}, {15 * time.Minute, 20 * time.Minute},
		{35 * time.Minute, 30 * time.Minute}, {65 * time.Minute, 30 * time.Minute}, {95 * time.Minute, 30 * time.Minute},
	}
	backoffs := ofKind(acts, cas.ActionBackoff)
	if len(backoffs) != len(want) || len(w.launches) != len(want) {
		t.Fatalf("%d backoffs, %d launches; want %d of each", len(backoffs), len(w.launches), len(want))
	}
	for i, b := range backoffs {
		if got := (struct{ at, backoff time.Duration }{b.At.Sub(t0), b.Until.Sub(b.At)}); got != want[i] {
			t.Errorf("backoff %d: at %s for %s, want at %s for %s", i, got.at, got.backoff, want[i].at, want[i].backoff)
		}
		if w.launches[i].at != want[i].at || w.launches[i].group != "gpu" {
			t.Errorf("launch %d: %+v, want the gpu group retried at %s", i, w.launches[i], want[i].at)
		}
	}
	if waits := ofKind(acts, cas.ActionNoScaleUp); len(waits) == 0 || !strings.Contains(waits[0].Reason, "gpu: backed off until") {
		t.Errorf("NotTriggerScaleUp actions %+v; want them to name the backoff", waits)
	}
}

func TestBackoffResetsAfterThreeQuietHours(t *testing.T) {
	cases := []struct {
		name        string
		gap         time.Duration
		wantBackoff time.Duration
	}{
		{"a failure within 3h doubles", time.Hour, 10 * time.Minute},
		{"a failure after 3h starts over", 3*time.Hour + 10*time.Second, 5 * time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld()
			w.short["gpu/us-east-1a"] = true
			a := newAutoscaler(t, w, gpu)
			w.pending = pods("vllm", 1, "4", "16Gi", gpus(4))
			a.RunOnce(t.Context(), w)
			w.clk.Step(tc.gap)
			backoffs := ofKind(a.RunOnce(t.Context(), w), cas.ActionBackoff)
			if len(backoffs) != 1 || backoffs[0].Until.Sub(backoffs[0].At) != tc.wantBackoff {
				t.Fatalf("backoffs %+v, want one of %s", backoffs, tc.wantBackoff)
			}
		})
	}
}

func TestRetriesTheSameGroupWhenCapacityReturns(t *testing.T) {
	w := newWorld()
	w.pending = pods("vllm", 1, "4", "16Gi", gpus(4))
	w.short["gpu/us-east-1a"] = true
	a := newAutoscaler(t, w, gpu, general, large)
	run(t, a, w, 12*time.Minute)
	delete(w.short, "gpu/us-east-1a")
	acts := run(t, a, w, 10*time.Minute)
	ups := ofKind(acts, cas.ActionScaleUp)
	if len(ups) != 1 || ups[0].Group != "gpu" || ups[0].At.Sub(t0) != 15*time.Minute {
		t.Fatalf("scale-ups %+v; want gpu at 15m, when its second backoff ends", ups)
	}
	for _, l := range w.launches {
		if l.group != "gpu" {
			t.Errorf("launched %s; CA has no other group for the pod", l.group)
		}
	}
}

func TestBackedOffUntil(t *testing.T) {
	w := newWorld()
	w.short["gpu/us-east-1a"] = true
	w.pending = pods("vllm", 1, "4", "16Gi", gpus(4))
	a := newAutoscaler(t, w, gpu)
	a.RunOnce(t.Context(), w)
	if until, ok := a.BackedOffUntil("gpu"); !ok || !until.Equal(t0.Add(5*time.Minute)) {
		t.Fatalf("BackedOffUntil = %s, %v; want %s, true", until, ok, t0.Add(5*time.Minute))
	}
	if _, ok := a.BackedOffUntil("m6i"); ok {
		t.Fatal("a group that never failed is backed off")
	}
}
