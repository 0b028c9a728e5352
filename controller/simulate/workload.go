package simulate

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/scheduling"
)

// workloadState is a Deployment or Job being replayed: the ReplicaSet or Job
// controller's part, creating and deleting pods.
type workloadState struct {
	spec      Workload
	tier      string
	namespace string
	name      string
	template  corev1.PodTemplateSpec
	// Job only: how many pods at once, and how many must complete; created
	// counts its pods, replacements of lost ones included.
	parallelism, completions int32
	created, completed       int32
	// seq numbers the pods created, for their names.
	seq int
	// live pods, oldest first
	live []*simPod
	// evicted are when pods of it were evicted by a voluntary disruption,
	// since its controller last created pods: the next pods replace them.
	evicted []time.Time
}

func newWorkloadState(s *Scenario, wl Workload) *workloadState {
	ws := &workloadState{spec: wl}
	if wl.Deployment != "" {
		d := s.deployment(wl.Deployment)
		ws.namespace, ws.name, ws.template = d.Namespace, d.Name, d.Spec.Template
	} else {
		j := s.job(wl.Job)
		ws.namespace, ws.name, ws.template = j.Namespace, j.Name, j.Spec.Template
		ws.parallelism, ws.completions = ptr.Deref(j.Spec.Parallelism, 1), ptr.Deref(j.Spec.Completions, 1)
	}
	if ws.namespace == "" {
		ws.namespace = "default"
	}
	ws.tier = wl.Tier
	if ws.tier == "" {
		ws.tier = ws.name
	}
	return ws
}

// owner is the controller reference of the workload's pods: the
// Deployment's ReplicaSet, or the Job.
func (ws *workloadState) owner() metav1.OwnerReference {
	if ws.spec.Job != "" {
		return metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: ws.name, UID: types.UID("job-" + ws.name), Controller: ptr.To(true)}
	}
	return metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: ws.name + "-rs", UID: types.UID("rs-" + ws.name), Controller: ptr.To(true)}
}

// desired is how many pods should exist at elapsed time t.
func (ws *workloadState) desired(t time.Duration) int {
	if ws.spec.Deployment != "" {
		return int(ws.spec.ReplicasAt(t))
	}
	if t < ws.spec.At.Duration {
		return 0
	}
	return int(min(ws.parallelism, ws.completions-ws.completed))
}

// reconcileWorkloads creates and deletes pods towards every workload's count.
func (w *world) reconcileWorkloads(ctx context.Context) error {
	t := w.elapsed()
	for _, ws := range w.workloads {
		want := ws.desired(t)
		// A Job's want already leaves out the completed pods: a pod lost
		// before completing (evicted, or gone with its node) is replaced.
		for len(ws.live) < want {
			if err := w.createPod(ctx, ws); err != nil {
				return err
			}
		}
		ws.evicted = nil // the rest were not replaced: the workload scaled in
		if excess := len(ws.live) - want; excess > 0 {
			for _, sp := range scaleDownOrder(ws.live, excess) {
				if err := w.deletePod(ctx, sp); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// scaleDownOrder picks the n pods a ReplicaSet removes first, as
// kube-controller-manager ranks them: unbound ones, newest first, then one
// at a time from the node running the most pods of the workload (so that
// scaling in spreads the removals and leaves partly filled nodes, as it does
// in a real cluster), the newest pod of the node whose newest is newest
// among equals. live is in creation order.
func scaleDownOrder(live []*simPod, n int) []*simPod {
	var out []*simPod
	byNode := map[string][]*simPod{} // node -> its pods, oldest first
	for i := len(live) - 1; i >= 0 && len(out) < n; i-- {
		if live[i].bound.IsZero() {
			out = append(out, live[i])
		}
	}
	for _, sp := range live {
		if !sp.bound.IsZero() {
			byNode[sp.node] = append(byNode[sp.node], sp)
		}
	}
	// The nodes in a heap, the one to take from next on top: a scale-in of
	// tens of thousands of pods over thousands of nodes must not look through
	// every node for each pod.
	nodes := make(podsByNode, 0, len(byNode))
	for _, pods := range byNode {
		nodes = append(nodes, pods)
	}
	heap.Init(&nodes)
	for len(out) < n && len(nodes) > 0 {
		pods := nodes[0]
		out = append(out, pods[len(pods)-1])
		if nodes[0] = pods[:len(pods)-1]; len(nodes[0]) == 0 {
			heap.Pop(&nodes)
		} else {
			heap.Fix(&nodes, 0)
		}
	}
	return out
}

// podsByNode is a heap of nodes' pods (each oldest first) whose top is the
// node running the most, the one whose newest pod is newest among equals.
type podsByNode [][]*simPod

func (h podsByNode) Len() int { return len(h) }
func (h podsByNode) Less(i, j int) bool {
	a, b := h[i], h[j]
	return len(a) > len(b) || len(a) == len(b) && newer(a[len(a)-1], b[len(b)-1])
}
func (h podsByNode) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *podsByNode) Push(x any)   { *h = append(*h, x.([]*simPod)) }
func (h *podsByNode) Pop() any     { return pop((*[][]*simPod)(h)) }

// newer reports whether a was created after b (creation order, then key).
func newer(a, b *simPod) bool {
	if !a.created.Equal(b.created) {
		return a.created.After(b.created)
	}
	return a.key > b.key
}

func (w *world) createPod(ctx context.Context, ws *workloadState) error {
	ws.seq++
	ws.created++
	pod := &corev1.Pod{
		ObjectMeta: *ws.template.ObjectMeta.DeepCopy(),
		Spec:       *ws.template.Spec.DeepCopy(),
	}
	pod.Namespace, pod.Name = ws.namespace, fmt.Sprintf("%s-%06d", ws.name, ws.seq)
	pod.OwnerReferences = []metav1.OwnerReference{ws.owner()}
	pod.CreationTimestamp = metav1.NewTime(w.clk.Now())
	pod.Status.Phase = corev1.PodPending
	priority, preemption := w.s.priorityOf(&pod.Spec)
	pod.Spec.Priority, pod.Spec.PreemptionPolicy = &priority, preemption
	withDefaultTolerations(&pod.Spec)
	if pod.Spec.SchedulerName == "" {
		pod.Spec.SchedulerName = corev1.DefaultSchedulerName
	}
	if err := w.kube.Create(ctx, pod); err != nil {
		return fmt.Errorf("creating pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	sp := &simPod{key: pod.Namespace + "/" + pod.Name, seq: w.created, tier: ws.tier, workload: ws, created: w.clk.Now(), pod: pod,
		requests: scheduling.PodRequests(pod)}
	if len(ws.evicted) > 0 {
		sp.replaces, ws.evicted = ws.evicted[0], ws.evicted[1:]
	}
	w.created++
	w.pods[sp.key] = sp
	w.podList = append(w.podList, sp)
	w.pendingList = append(w.pendingList, sp)
	w.unbound++
	ws.live = append(ws.live, sp)
	w.newPods = true
	return nil
}

// deletePod deletes a pod and forgets it.
func (w *world) deletePod(ctx context.Context, sp *simPod) error {
	pod := &corev1.Pod{}
	pod.Namespace, pod.Name = splitKey(sp.key)
	if err := w.kube.Delete(ctx, pod); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting pod %s: %w", sp.key, err)
	}
	w.forget(sp)
	return nil
}

// forget drops a pod that is gone (deleted, evicted, or lost with its node).
func (w *world) forget(sp *simPod) {
	if _, tracked := w.pods[sp.key]; !tracked {
		return
	}
	if !sp.running {
		w.out.neverRan[sp.tier] = append(w.out.neverRan[sp.tier], w.clk.Since(sp.created))
		w.waited(sp, false, w.clk.Now())
	}
	if sp.bound.IsZero() {
		w.unbound--
	} else {
		w.requested[sp.node] = w.requested[sp.node].Sub(sp.requests)
	}
	delete(w.pods, sp.key)
	if ws := sp.workload; ws != nil {
		// live is in creation order: found by its number, not looked for.
		if i, found := slices.BinarySearchFunc(ws.live, sp.seq, func(p *simPod, seq int) int { return cmp.Compare(p.seq, seq) }); found {
			ws.live = slices.Delete(ws.live, i, i+1)
		}
	}
	w.dirty = true
}

// finishJobs completes Job pods that have run for their time.
func (w *world) finishJobs(ctx context.Context) error {
	now := w.clk.Now()
	var still []*simPod
	for _, sp := range w.finishing {
		switch {
		case w.pods[sp.key] != sp:
		case now.Before(sp.finishAt):
			still = append(still, sp)
		default:
			sp.workload.completed++
			if err := w.deletePod(ctx, sp); err != nil {
				return err
			}
		}
	}
	w.finishing = still
	return nil
}
