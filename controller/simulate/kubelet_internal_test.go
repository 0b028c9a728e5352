package simulate

import (
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/provisioning"
)

// atEnd is an observer that looks at the world once the run is over.
type atEnd func(w *world)

func (atEnd) instant(*world)                         {}
func (atEnd) published(*world, []provisioning.Event) {}
func (atEnd) warned(*world, string, string, string)  {}
func (f atEnd) end(w *world)                         { f(w) }
func (atEnd) lost(*world, *simPod, string)           {}
func (atEnd) left(*world, *corev1.Pod)               {}

// TestEveryNodeRunsItsDaemonSetPod: a Stowage node registers with the taint
// its user data gives until its NodeClaim's registration lifts it; the
// DaemonSet controller still runs the zone-spread scenario's agent on
// every node, as it does once the taint is gone.
func TestEveryNodeRunsItsDaemonSetPod(t *testing.T) {
	f, err := os.Open("testdata/zone-spread.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := ReadScenario(f)
	if err != nil {
		t.Fatal(err)
	}
	nodes, withAgent := 0, 0
	if _, err := Run(t.Context(), s, Options{observer: atEnd(func(w *world) {
		for _, in := range w.instances {
			if in.node != "" {
				nodes++
				if len(w.daemonPods[in.node]) == 1 {
					withAgent++
				}
			}
		}
	})}); err != nil {
		t.Fatal(err)
	}
	if nodes == 0 || withAgent != nodes {
		t.Errorf("%d of %d nodes run the DaemonSet's pod, want all", withAgent, nodes)
	}
}
