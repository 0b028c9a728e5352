package termination

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowevents "github.com/stowage-dev/stowage/controller/events"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// stuckAfter is how long past its deletion timestamp (which already includes
// its grace period) a terminating pod is waited for. After that its kubelet
// is taken to be gone and the pod no longer holds the drain.
const stuckAfter = time.Minute

// drain taints the Node and evicts its pods. It returns 0 once no pod the
// drain waits for is left, or how long to wait before looking again: the
// eviction backoff when a PDB refused an eviction, the poll interval while
// evicted pods shut down or do-not-disrupt pods hold on.
func (t *terminator) drain(ctx context.Context, j job) (time.Duration, error) {
	started, err := t.taint(ctx, j.node)
	if err != nil {
		return 0, err
	}
	pods, err := t.podsOn(ctx, j.node.Name)
	if err != nil {
		return 0, err
	}
	waiting := filter(pods, t.waitsFor)
	if started {
		t.announce(j, waiting)
	}
	if len(waiting) == 0 {
		t.backoff.Forget(j.key)
		t.moved.forget(j.key)
		t.released.forget(j.key)
		t.awaited.forget(j.key)
		t.refused.set(j.key, nil)
		t.forgetWait(j.key)
		return 0, nil
	}
	if t.awaitReplacement(ctx, j, waiting) {
		return t.opts.DrainPollInterval, nil
	}
	if j.deadline != nil && !t.clk.Now().Before(*j.deadline) {
		return t.opts.DrainPollInterval, t.deleteAll(ctx, j, filter(waiting, notTerminating), gracePeriodOver)
	}
	if at := interruptedBy(j, waiting); at != nil && !t.clk.Now().Before(*at) {
		return t.opts.DrainPollInterval, t.leaveBeforeTheInstance(ctx, j, filter(waiting, notTerminating))
	}
	evicted, refused, err := t.evictAll(ctx, j, toEvict(waiting, t.clk.Now()))
	if err != nil {
		return 0, err
	}
	if refused {
		// A PDB paces the drain: an eviction it let through starts the
		// backoff again, so that the next pod goes as soon as it may.
		if evicted {
			t.backoff.Forget(j.key)
		}
		return t.backoff.When(j.key), nil
	}
	return t.opts.DrainPollInterval, nil
}

func (t *terminator) podsOn(ctx context.Context, node string) ([]*corev1.Pod, error) {
	list := &corev1.PodList{}
	// Read only (evictions and deletions name the pods): a drain polls its
	// node's pods every few seconds.
	if err := t.kube.List(ctx, list, client.MatchingFields{nodeclaim.PodNodeNameField: node}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing the pods of node %s: %w", node, err)
	}
	pods := make([]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		pods[i] = &list.Items[i]
	}
	return pods, nil
}

// waitsFor reports whether the drain waits for the pod to be gone. Finished
// pods, DaemonSet and mirror pods (their controllers would put them straight
// back), pods that tolerate the disrupted taint, and pods stuck terminating
// do not hold it.
func (t *terminator) waitsFor(pod *corev1.Pod) bool {
	switch {
	case pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed:
		return false
	case isMirror(pod) || ownedByDaemonSet(pod) || toleratesDisrupted(pod):
		return false
	case pod.DeletionTimestamp != nil && t.clk.Now().After(pod.DeletionTimestamp.Add(stuckAfter)):
		return false
	}
	return true
}

// toEvict picks the pods to evict now from those the drain waits for: not
// already terminating, not annotated do-not-disrupt, and critical system
// pods only once every other pod is gone, so that DNS and node agents serve
// the rest of the drain.
func toEvict(waiting []*corev1.Pod, now time.Time) []*corev1.Pod {
	group := filter(waiting, func(p *corev1.Pod) bool { return !isCritical(p) })
	if len(group) == 0 {
		group = waiting
	}
	return filter(group, func(p *corev1.Pod) bool { return notTerminating(p) && !DoNotDisrupt(p, now) })
}

// evictAll evicts the pods through the Eviction API and reports whether any
// eviction went through, and whether any was refused (429: a PDB allows no
// disruption now); the refused pods are remembered for the PDB watch
// (pdbwake.go). A pod already evicted is skipped even if the cache does not
// show it terminating yet.
func (t *terminator) evictAll(ctx context.Context, j job, pods []*corev1.Pod) (evicted, refused bool, err error) {
	var held []refusedPod
	defer func() { t.refused.set(j.key, held) }()
	for _, pod := range pods {
		if t.moved.has(j.key, pod.UID) {
			continue
		}
		ok, err := t.evict(ctx, pod)
		if err != nil {
			return evicted, refused, err
		}
		if ok {
			t.moved.add(j.key, pod.UID)
		} else {
			held = append(held, refusedPodOf(pod.Namespace, pod.Labels))
		}
		evicted, refused = evicted || ok, refused || !ok
	}
	return evicted, refused, nil
}

func (t *terminator) evict(ctx context.Context, pod *corev1.Pod) (bool, error) {
	eviction := &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}},
	}
	err := t.kube.SubResource("eviction").Create(ctx, pod, eviction)
	switch {
	case err == nil:
		Evictions.WithLabelValues(OutcomeEvicted).Inc()
		stowevents.Publish(t.recorder, evictedEvent(pod))
		return true, nil
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		return true, nil // gone, or replaced by a pod of the same name
	case apierrors.IsTooManyRequests(err):
		Evictions.WithLabelValues(OutcomeRefused).Inc()
		t.log.Debug("eviction refused by a disruption budget", "node", pod.Spec.NodeName, "pod", pod.Namespace+"/"+pod.Name)
		stowevents.Publish(t.recorder, evictionRefusedEvent(pod, err))
		return false, nil
	}
	return false, fmt.Errorf("evicting pod %s/%s: %w", pod.Namespace, pod.Name, err)
}

// deleteAll deletes the pods outright, past PDBs and do-not-disrupt
// annotations, for the reason f: the termination grace period is over, or
// the instance's interruption is near.
func (t *terminator) deleteAll(ctx context.Context, j job, pods []*corev1.Pod, f forced) error {
	for _, pod := range pods {
		if t.moved.has(j.key, pod.UID) {
			continue
		}
		err := t.kube.Delete(ctx, pod, client.Preconditions{UID: &pod.UID})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("deleting pod %s/%s (%s): %w", pod.Namespace, pod.Name, f.reason, err)
		}
		t.moved.add(j.key, pod.UID)
		Evictions.WithLabelValues(OutcomeDeleted).Inc()
		t.log.Info("deleted pod: node's "+f.why, "node", j.node.Name, "nodeclaim", j.claim.Name,
			"pod", pod.Namespace+"/"+pod.Name)
		stowevents.Publish(t.recorder, podDeletedEvent(pod, j.node, f))
	}
	return nil
}

// leaveBeforeTheInstance evicts the pods of an interrupted node, and
// deletes those whose eviction a PDB refuses and those annotated
// do-not-disrupt: the instance goes at the deadline whatever they say, and a
// pod deleted now still gets its grace period.
func (t *terminator) leaveBeforeTheInstance(ctx context.Context, j job, pods []*corev1.Pod) error {
	if _, _, err := t.evictAll(ctx, j, pods); err != nil {
		return err
	}
	return t.deleteAll(ctx, j, pods, interruptionArrives)
}

// announce reports, once when the drain starts, how many pods it waits for
// and which of them are do-not-disrupt.
func (t *terminator) announce(j job, waiting []*corev1.Pod) {
	t.log.Info("draining node", "node", j.node.Name, "nodeclaim", j.claim.Name,
		"nodepool", j.claim.Labels[v1alpha1.LabelNodePool], "pods", len(waiting))
	stowevents.Publish(t.recorder, drainingEvent(j.node, len(waiting), j.deadline))
	now := t.clk.Now()
	for _, pod := range filter(waiting, func(p *corev1.Pod) bool { return DoNotDisrupt(p, now) }) {
		stowevents.Publish(t.recorder, disruptionBlockedEvent(pod, j.node, j.deadline))
	}
}

func isMirror(pod *corev1.Pod) bool {
	_, ok := pod.Annotations[corev1.MirrorPodAnnotationKey]
	return ok
}

func ownedByDaemonSet(pod *corev1.Pod) bool {
	for _, ref := range pod.OwnerReferences {
		if ref.Kind == "DaemonSet" && ref.Controller != nil && *ref.Controller {
			return true
		}
	}
	return false
}

func toleratesDisrupted(pod *corev1.Pod) bool {
	return scheduling.Tolerates([]corev1.Taint{v1alpha1.DisruptedNoScheduleTaint}, pod.Spec.Tolerations) == nil
}

func isCritical(pod *corev1.Pod) bool {
	return pod.Spec.PriorityClassName == "system-cluster-critical" || pod.Spec.PriorityClassName == "system-node-critical"
}

func notTerminating(pod *corev1.Pod) bool { return pod.DeletionTimestamp == nil }

func filter(pods []*corev1.Pod, keep func(*corev1.Pod) bool) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if keep(p) {
			out = append(out, p)
		}
	}
	return out
}

// movedPods remembers, per job, the pods already evicted or deleted, so that a
// cache that has not yet seen them terminating does not make the drain act on
// (and count, and report) them twice.
type movedPods struct {
	mu   sync.Mutex
	pods map[string]map[types.UID]bool // job key -> pods evicted or deleted
}

func (m *movedPods) has(key string, uid types.UID) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pods[key][uid]
}

// add records uid under key and reports whether it was new.
func (m *movedPods) add(key string, uid types.UID) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pods == nil {
		m.pods = map[string]map[types.UID]bool{}
	}
	if m.pods[key] == nil {
		m.pods[key] = map[types.UID]bool{}
	}
	if m.pods[key][uid] {
		return false
	}
	m.pods[key][uid] = true
	return true
}

func (m *movedPods) forget(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.pods, key)
}
