package simulate

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/stowage-dev/stowage/controller/manifest/manifesttest"
)

// FuzzReadScenario checks ReadScenario on any input: it never panics; what it
// refuses is refused with errors placed on a line of the input, naming the
// field of the object; what it accepts validates again unchanged, names only
// workloads the file holds, and gives replica curves that stay between zero
// and the largest count written. `go test` runs the seeds below and those in
// testdata/fuzz/FuzzReadScenario.
func FuzzReadScenario(f *testing.F) {
	for _, name := range []string{"testdata/scale-up-down.yaml", "testdata/gpu-shortage.yaml"} {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadScenario(bytes.NewReader(data))
		if err != nil {
			manifesttest.CheckErrors(t, data, err, ErrNoScenario)
			return
		}
		if err := s.validate(); err != nil {
			t.Fatalf("an accepted scenario does not validate again: %v", err)
		}
		for i := range s.Spec.Workloads {
			w := &s.Spec.Workloads[i]
			if (w.Deployment != "" && s.deployment(w.Deployment) == nil) || (w.Job != "" && s.job(w.Job) == nil) {
				t.Fatalf("workload %d names an object the file does not hold", i)
			}
			checkCurve(t, w, s.Spec.Duration.Duration)
		}
	})
}

// checkCurve samples a replica curve over the run.
func checkCurve(t *testing.T, w *Workload, d time.Duration) {
	var most int32
	for _, p := range w.Replicas {
		most = max(most, p.Count)
	}
	step := max(d/64, time.Second)
	for at := time.Duration(0); at <= d; at += step {
		if n := w.ReplicasAt(at); n < 0 || n > most {
			t.Fatalf("%s: %d replicas at %s, outside [0, %d]", w.Deployment, n, at, most)
		}
	}
}
