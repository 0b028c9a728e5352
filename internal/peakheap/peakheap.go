// Package peakheap measures the most heap a piece of work occupies, for the
// benchmarks' peak_heap_mib figures. The process's own high-water marks
// (getrusage's maximum RSS, MemStats.HeapSys) cover every case a test binary
// ran before, so each case samples its own.
package peakheap

import (
	"runtime"
	"runtime/metrics"
	"time"
)

// heapObjects is every heap object, live or not yet collected.
const heapObjects = "/memory/classes/heap/objects:bytes"

// Sampler samples the heap's objects on a ticker from Start until Stop.
type Sampler struct {
	baseline uint64
	peak     chan uint64
	done     chan struct{}
}

// Start collects garbage, takes what is left as the baseline, and samples
// every interval until Stop.
func Start(interval time.Duration) *Sampler {
	runtime.GC()
	s := &Sampler{baseline: read(), peak: make(chan uint64), done: make(chan struct{})}
	go func() {
		peak := s.baseline
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			peak = max(peak, read())
			select {
			case <-s.done:
				s.peak <- max(peak, read())
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// Stop ends the sampling and returns the peak less the baseline, in MiB.
func (s *Sampler) Stop() float64 {
	close(s.done)
	return float64(<-s.peak-s.baseline) / (1 << 20)
}

func read() uint64 {
	sample := []metrics.Sample{{Name: heapObjects}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}
