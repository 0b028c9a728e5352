package simulate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The simulated cluster has no kube-controller-manager and no eviction REST
// handler of its own (controller-runtime's fake client deletes the pod of any
// eviction). This file is their part for PodDisruptionBudgets, after
// kubernetes v1.37's pkg/controller/disruption (status) and
// pkg/registry/core/pod/storage/eviction.go (refusals), with one difference:
// a pod evicted here is gone at once (the simulated kubelet has no grace
// periods), so no DisruptedPods are kept.

// syncPDBs is the disruption controller: every PDB's status from the pods its
// selector matches, written when it changes. The world calls it once an
// instant when a pod changed, as the controller follows pod events.
func (w *world) syncPDBs(ctx context.Context) error {
	if !w.podsChanged || len(w.s.PodDisruptionBudgets) == 0 {
		return nil
	}
	w.podsChanged = false
	list := &policyv1.PodDisruptionBudgetList{}
	if err := w.kube.List(ctx, list); err != nil {
		return err
	}
	for i := range list.Items {
		pdb := &list.Items[i]
		status, err := w.pdbStatus(ctx, pdb)
		if err != nil {
			return err
		}
		if pdbStatusEqual(pdb.Status, status) {
			continue
		}
		pdb.Status = status
		if err := w.kube.Status().Update(ctx, pdb); err != nil {
			return fmt.Errorf("writing the status of PodDisruptionBudget %s/%s: %w", pdb.Namespace, pdb.Name, err)
		}
	}
	return nil
}

// pdbStatus computes a PDB's status as the disruption controller's trySync
// does: the expected and desired healthy pod counts by the budget's kind,
// the Ready pods not being deleted, and the disruptions that leaves. A
// budget it cannot compute (a percentage or maxUnavailable over pods whose
// controller has no scale, such as a Job's) allows none, with the
// SyncFailed condition, as failSafe writes it.
func (w *world) pdbStatus(ctx context.Context, pdb *policyv1.PodDisruptionBudget) (policyv1.PodDisruptionBudgetStatus, error) {
	pods, err := w.kube.podsOf(ctx, pdb)
	if err != nil {
		return policyv1.PodDisruptionBudgetStatus{}, err
	}
	status := *pdb.Status.DeepCopy()
	status.ObservedGeneration = pdb.Generation
	expected, desired, err := w.expectedPods(pdb, pods)
	if err != nil {
		status.DisruptionsAllowed = 0
		setAllowed(&status, policyv1.SyncFailedReason, err.Error(), w.clk.Now())
		return status, nil
	}
	status.CurrentHealthy, status.DesiredHealthy, status.ExpectedPods, status.DisruptionsAllowed = 0, desired, expected, 0
	for _, p := range pods {
		if p.DeletionTimestamp == nil && podReady(p) {
			status.CurrentHealthy++
		}
	}
	if allowed := status.CurrentHealthy - desired; expected > 0 && allowed > 0 {
		status.DisruptionsAllowed = allowed
	}
	setAllowed(&status, "", "", w.clk.Now())
	return status, nil
}

// setAllowed sets the DisruptionAllowed condition from DisruptionsAllowed,
// as UpdateDisruptionAllowedCondition does, or to False with reason and
// message when a reason is given; its transition time is now when its status
// changes.
func setAllowed(s *policyv1.PodDisruptionBudgetStatus, reason, message string, now time.Time) {
	cond := metav1.Condition{Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionFalse, Reason: reason, Message: message,
		ObservedGeneration: s.ObservedGeneration, LastTransitionTime: metav1.NewTime(now)}
	switch {
	case reason != "":
	case s.DisruptionsAllowed > 0:
		cond.Status, cond.Reason = metav1.ConditionTrue, policyv1.SufficientPodsReason
	default:
		cond.Reason = policyv1.InsufficientPodsReason
	}
	meta.SetStatusCondition(&s.Conditions, cond)
}

// expectedPods is getExpectedPodCount: a minAvailable count counts the
// matching pods; a percentage or maxUnavailable counts their controllers'
// scale.
func (w *world) expectedPods(pdb *policyv1.PodDisruptionBudget, pods []*corev1.Pod) (expected, desired int32, err error) {
	switch {
	case pdb.Spec.MaxUnavailable != nil:
		if expected, err = w.expectedScale(pods); err != nil {
			return 0, 0, err
		}
		unavailable, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, int(expected), true)
		if err != nil {
			return 0, 0, err
		}
		return expected, max(expected-int32(unavailable), 0), nil
	case pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.Type == intstr.Int:
		return int32(len(pods)), pdb.Spec.MinAvailable.IntVal, nil
	case pdb.Spec.MinAvailable != nil:
		if expected, err = w.expectedScale(pods); err != nil {
			return 0, 0, err
		}
		available, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, int(expected), true)
		return expected, int32(available), err
	}
	return 0, 0, nil
}

// expectedScale sums the scale of the pods' controllers: a Deployment's
// replicas for its ReplicaSet's pods. Pods without a controller are left
// out; a controller without a scale (a Job, a DaemonSet) is an error, as
// the disruption controller finds no scale for it.
func (w *world) expectedScale(pods []*corev1.Pod) (int32, error) {
	scales := map[string]int32{}
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil {
			continue
		}
		ws := w.workloadOf(ref)
		if ws == nil || ws.spec.Deployment == "" {
			return 0, fmt.Errorf("found no controllers for pod %q", p.Name)
		}
		scales[string(ref.UID)] = int32(ws.desired(w.elapsed()))
	}
	var total int32
	for _, n := range scales {
		total += n
	}
	return total, nil
}

// workloadOf is the workload whose pods carry the controller reference.
func (w *world) workloadOf(ref *metav1.OwnerReference) *workloadState {
	for _, ws := range w.workloads {
		if ws.owner().UID == ref.UID {
			return ws
		}
	}
	return nil
}

// evict is the Eviction subresource: a pod that is finished, pending or
// already being deleted is deleted at once; otherwise the one PDB that
// matches it (more is an error) must allow a disruption, which the eviction
// takes from its status before the pod is deleted. A refusal is the API
// server's 429.
func (k *kube) evict(ctx context.Context, c client.Client, obj client.Object) error {
	pod, ok := peek[*corev1.Pod](k.mirror, client.ObjectKeyFromObject(obj))
	if !ok {
		return apierrors.NewNotFound(corev1.Resource("pods"), obj.GetName())
	}
	if uid := obj.GetUID(); uid != "" && uid != pod.UID {
		return apierrors.NewConflict(corev1.Resource("pods"), obj.GetName(), errors.New("the UID in the precondition does not match"))
	}
	if !canIgnorePDB(pod) {
		if err := k.takeDisruption(ctx, pod); err != nil {
			return err
		}
	}
	k.onEvict(pod)
	return k.after(obj, c.Delete(ctx, pod.DeepCopy()))
}

// takeDisruption checks the PDB of a pod and decrements its allowed
// disruptions, as checkAndDecrement does.
func (k *kube) takeDisruption(ctx context.Context, pod *corev1.Pod) error {
	pdbs, err := k.pdbsOf(ctx, pod)
	switch {
	case err != nil:
		return err
	case len(pdbs) > 1:
		return apierrors.NewInternalError(errors.New("this pod has more than one PodDisruptionBudget, which the eviction subresource does not support"))
	case len(pdbs) == 0:
		return nil
	}
	pdb := pdbs[0]
	if !podReady(pod) {
		policy := pdb.Spec.UnhealthyPodEvictionPolicy
		if policy != nil && *policy == policyv1.AlwaysAllow ||
			pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0 {
			return nil
		}
	}
	if pdb.Status.ObservedGeneration < pdb.Generation || pdb.Status.DisruptionsAllowed <= 0 {
		return tooManyRequests(pdb)
	}
	pdb.Status.DisruptionsAllowed--
	setAllowed(&pdb.Status, "", "", k.clk.Now())
	return k.updatePDBStatus(pdb)
}

// updatePDBStatus writes a PDB's status through the tracker, as
// updatePodStatus does a pod's: the fake client's Update keeps the stored
// status of the kinds that have the subresource in-tree.
func (k *kube) updatePDBStatus(pdb *policyv1.PodDisruptionBudget) error {
	current, ok := peek[*policyv1.PodDisruptionBudget](k.mirror, client.ObjectKeyFromObject(pdb))
	if !ok {
		return apierrors.NewNotFound(policyv1.Resource("poddisruptionbudgets"), pdb.Name)
	}
	if pdb.ResourceVersion != "" && pdb.ResourceVersion != current.ResourceVersion {
		return apierrors.NewConflict(policyv1.Resource("poddisruptionbudgets"), pdb.Name, errors.New("object was modified"))
	}
	n, err := strconv.ParseUint(cmp.Or(current.ResourceVersion, "0"), 10, 64)
	if err != nil {
		return fmt.Errorf("PodDisruptionBudget %s has resource version %q: %w", pdb.Name, current.ResourceVersion, err)
	}
	stored := current.DeepCopy()
	stored.Status = *pdb.Status.DeepCopy()
	stored.ResourceVersion = strconv.FormatUint(n+1, 10)
	if err := k.tracker.Update(policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets"), stored, stored.Namespace); err != nil {
		return err
	}
	k.mirror.adopt(stored)
	stored.DeepCopyInto(pdb)
	k.feed(stored, false)
	k.onWrite(stored, false)
	return nil
}

// tooManyRequests is the API server's refusal, with its cause.
func tooManyRequests(pdb *policyv1.PodDisruptionBudget) error {
	err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause,
		Message: fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy)})
	return err
}

// pdbsOf lists the PDBs of the pod's namespace whose selector matches it.
func (k *kube) pdbsOf(ctx context.Context, pod *corev1.Pod) ([]*policyv1.PodDisruptionBudget, error) {
	list := &policyv1.PodDisruptionBudgetList{}
	if err := k.List(ctx, list, client.InNamespace(pod.Namespace)); err != nil {
		return nil, err
	}
	var out []*policyv1.PodDisruptionBudget
	for i := range list.Items {
		sel, err := metav1.LabelSelectorAsSelector(list.Items[i].Spec.Selector)
		if err == nil && sel.Matches(labels.Set(pod.Labels)) {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

// podsOf lists the pods a PDB's selector matches in its namespace; none for
// a nil selector, as in policy/v1.
func (k *kube) podsOf(ctx context.Context, pdb *policyv1.PodDisruptionBudget) ([]*corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil || pdb.Spec.Selector == nil {
		return nil, nil //nolint:nilerr // an invalid selector matches nothing, as in the disruption controller
	}
	list := &corev1.PodList{}
	if err := k.List(ctx, list, client.InNamespace(pdb.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, err
	}
	out := make([]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

// canIgnorePDB: evicting a finished, pending or terminating pod disrupts
// nothing more.
func canIgnorePDB(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed ||
		p.Status.Phase == corev1.PodPending || p.DeletionTimestamp != nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func pdbStatusEqual(a, b policyv1.PodDisruptionBudgetStatus) bool {
	return equality.Semantic.DeepEqual(a, b)
}
