package provisioning

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// rampSnapshot is a batch of pending pods of workload web beside running
// ones on a node.
func rampSnapshot(running, pending int) *scheduler.Snapshot {
	pod := func(i int) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i), Namespace: "default",
			OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web", UID: "rs-web", Controller: ptr.To(true)}}}}
	}
	snap := &scheduler.Snapshot{Nodes: []*scheduler.StateNode{{}}}
	for i := range running {
		snap.Nodes[0].Pods = append(snap.Nodes[0].Pods, pod(i))
	}
	for i := running; i < running+pending; i++ {
		snap.Pods = append(snap.Pods, pod(i))
	}
	return snap
}

func TestRampsExpectAWorkloadToGrowAsItDid(t *testing.T) {
	t0 := time.Date(2026, 11, 2, 0, 20, 0, 0, time.UTC)
	var rp ramps
	steps := []struct {
		at               time.Duration
		running, pending int
		want             int
	}{
		// A workload scaled in one step expects nothing more.
		{0, 15, 30, 0},
		{10 * time.Minute, 45, 0, 0},
		// One pod every 20 s: the growth before each batch, within two
		// minutes; the first two batches show none yet.
		{20 * time.Minute, 45, 1, 0},
		{20*time.Minute + 20*time.Second, 46, 1, 0},
		{20*time.Minute + 40*time.Second, 47, 1, 1},
		{21 * time.Minute, 48, 1, 2},
		// The same pod again (its claim found no capacity): nothing new.
		{21*time.Minute + 5*time.Second, 48, 1, 2},
		// The window slides: 53 pods now, 48 at 20m40s.
		{22*time.Minute + 30*time.Second, 52, 1, 4},
		// Quiet for longer than the window: no ramp any more.
		{26 * time.Minute, 53, 1, 0},
	}
	for i, s := range steps {
		got := rp.expected(rampSnapshot(s.running, s.pending), t0.Add(s.at))[types.UID("rs-web")]
		if got != s.want {
			t.Errorf("step %d (%v): %d pods expected, want %d", i, s.at, got, s.want)
		}
	}
}

// A pending pod nominated to a claim is among the claim's pods too; it is
// one pod, not growth.
func TestRampsCountANominatedPodOnce(t *testing.T) {
	t0 := time.Date(2026, 11, 2, 0, 20, 0, 0, time.UTC)
	var rp ramps
	rp.expected(rampSnapshot(44, 1), t0)
	snap := rampSnapshot(45, 1)
	snap.Nodes = append(snap.Nodes, &scheduler.StateNode{Pods: snap.Pods})
	if got := rp.expected(snap, t0.Add(20*time.Second))[types.UID("rs-web")]; got != 0 {
		t.Errorf("%d pods expected, want 0: the workload did not grow", got)
	}
}
