package peakheap_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/stowage-dev/stowage/internal/peakheap"
)

var sink [][]byte

// TestStopCountsTheWorkNotWhatWasLiveBefore holds 32 MiB from before Start
// and allocates 64 MiB in 1 MiB blocks after it: the peak is the 64 MiB (and
// a little of the runtime's own), not the 32.
func TestStopCountsTheWorkNotWhatWasLiveBefore(t *testing.T) {
	before := make([]byte, 32<<20)
	s := peakheap.Start(time.Hour) // no tick: the first and last samples only
	for range 64 {
		sink = append(sink, make([]byte, 1<<20))
	}
	got := s.Stop()
	sink = nil
	runtime.KeepAlive(before)
	if got < 64 || got > 72 {
		t.Errorf("peak = %.1f MiB, want 64 to 72 (the 64 MiB allocated, not the 32 live before)", got)
	}
}
