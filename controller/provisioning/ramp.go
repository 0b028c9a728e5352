package provisioning

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// RampWindow is how far back the provisioner looks at a workload's growth,
// and how far ahead it expects as much again: about the time a node takes
// from launch to Ready on EKS, during which a pod that comes would find no
// other new node ready anyway.
const RampWindow = 2 * time.Minute

// ramps notices workloads that grow pod by pod (an HPA scaling a Deployment
// up a few replicas at a time): each batch then holds a pod or two, and sized
// for them alone every new node would be the smallest that fits, a fleet of
// half-empty nodes (a 2-CPU pod on a 4-vCPU node). It remembers, batch by
// batch, how many pods each workload of the batch had; the growth before the
// batch within RampWindow is how many more the batch's claims are sized for
// (scheduler.Snapshot.Expected), when that makes each pod cheaper. A workload
// scaled in one step has no growth before its batch and expects nothing.
type ramps struct {
	// owner UID -> its pod counts within the window, oldest first
	samples map[types.UID][]rampSample
}

type rampSample struct {
	at   time.Time
	pods int
}

// expected records the batch's workloads at now and returns, per workload,
// the pods it grew by within RampWindow before this batch's own.
func (rp *ramps) expected(snap *scheduler.Snapshot, now time.Time) map[types.UID]int {
	if rp.samples == nil {
		rp.samples = map[types.UID][]rampSample{}
	}
	pending := map[types.UID]int{}
	for _, pod := range snap.Pods {
		if owner := metav1.GetControllerOf(pod); owner != nil {
			pending[owner.UID]++
		}
	}
	live := livePods(snap, pending)
	out := map[types.UID]int{}
	for uid := range pending {
		hist := rp.samples[uid]
		for len(hist) > 0 && now.Sub(hist[0].at) > RampWindow {
			hist = hist[1:]
		}
		if len(hist) > 0 {
			least := hist[0].pods
			for _, s := range hist {
				least = min(least, s.pods)
			}
			if grew := live[uid] - pending[uid] - least; grew > 0 {
				out[uid] = grew
			}
		}
		rp.samples[uid] = append(hist, rampSample{at: now, pods: live[uid]})
	}
	for uid, hist := range rp.samples {
		if now.Sub(hist[len(hist)-1].at) > RampWindow {
			delete(rp.samples, uid)
		}
	}
	return out
}

// livePods counts, per workload of owners, its pods that are not finished or
// being deleted: the batch's and those on nodes, each once.
func livePods(snap *scheduler.Snapshot, owners map[types.UID]int) map[types.UID]int {
	out := map[types.UID]int{}
	live := func(pod *corev1.Pod) (types.UID, bool) {
		owner := metav1.GetControllerOf(pod)
		if owner == nil || owners[owner.UID] == 0 || pod.DeletionTimestamp != nil ||
			pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			return "", false
		}
		return owner.UID, true
	}
	// A batch's pod may be on a node too, nominated there and not bound: the
	// batch's pods are remembered to count each once, and a bound pod, not
	// one of the batch, is counted without looking.
	batch := make(map[types.NamespacedName]bool, len(snap.Pods))
	for _, pod := range snap.Pods {
		key := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
		if uid, ok := live(pod); ok && !batch[key] {
			batch[key] = true
			out[uid]++
		}
	}
	for _, sn := range snap.Nodes {
		for _, pod := range sn.Pods {
			if uid, ok := live(pod); ok && (pod.Spec.NodeName != "" || !batch[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}]) {
				out[uid]++
			}
		}
	}
	return out
}
