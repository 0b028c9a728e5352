package termination

import (
	"context"
	"maps"
	"strings"
	"sync"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A drain a PDB refused retries when the eviction backoff runs out, and
// also as soon as the PDB's status allows a disruption again (the
// disruption controller writes it when a replacement pod becomes Ready) or
// the PDB is deleted: a PDB that paces a drain lets its next pod go within
// the time its status takes to reach the watch, not the backoff's seconds.

// refusedPod is what a PDB's selector is matched against.
type refusedPod struct {
	namespace string
	labels    labels.Set
}

// refusals remembers, per job, the pods whose last eviction a PDB refused.
type refusals struct {
	mu   sync.Mutex
	jobs map[string][]refusedPod // job key -> pods refused at its last attempt
}

// set replaces the job's refused pods; none forgets the job.
func (r *refusals) set(key string, pods []refusedPod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(pods) == 0 {
		delete(r.jobs, key)
		return
	}
	if r.jobs == nil {
		r.jobs = map[string][]refusedPod{}
	}
	r.jobs[key] = pods
}

// refusedBy lists the keys of the jobs with a refused pod the PDB selects.
func (r *refusals) refusedBy(pdb *policyv1.PodDisruptionBudget) []string {
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil || pdb.Spec.Selector == nil {
		return nil // such a PDB selects no pod, so it refused none
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var keys []string
	for key, pods := range r.jobs {
		for _, p := range pods {
			if p.namespace == pdb.Namespace && sel.Matches(p.labels) {
				keys = append(keys, key)
				break
			}
		}
	}
	return keys
}

func refusedPodOf(namespace string, podLabels map[string]string) refusedPod {
	return refusedPod{namespace: namespace, labels: maps.Clone(podLabels)}
}

// allows reports whether an eviction the PDB refused could go through now:
// its status, written for its current spec, allows a disruption.
func allows(pdb *policyv1.PodDisruptionBudget) bool {
	return pdb.Status.ObservedGeneration >= pdb.Generation && pdb.Status.DisruptionsAllowed > 0
}

// WokenBy names the NodeClaims and the Nodes (without a claim) whose drains
// a PDB refused and that should try again now that the PDB allows a
// disruption, or is gone. Register's watches call it; so does a caller that
// drives the reconcilers itself (the simulator).
func (c *Controller) WokenBy(pdb *policyv1.PodDisruptionBudget, gone bool) (claims, nodes []string) {
	if !gone && !allows(pdb) {
		return nil, nil
	}
	for _, key := range c.refused.refusedBy(pdb) {
		if name, ok := strings.CutPrefix(key, "nodeclaim/"); ok {
			claims = append(claims, name)
		} else if name, ok := strings.CutPrefix(key, "node/"); ok {
			nodes = append(nodes, name)
		}
	}
	return claims, nodes
}

// pdbHandler enqueues what WokenBy names for one of the two controllers.
func (c *Controller) pdbHandler(nodes bool) handler.TypedEventHandler[client.Object, reconcile.Request] {
	enqueue := func(obj client.Object, gone bool, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		pdb, ok := obj.(*policyv1.PodDisruptionBudget)
		if !ok {
			return
		}
		claimNames, nodeNames := c.WokenBy(pdb, gone)
		if nodes {
			claimNames = nodeNames
		}
		for _, name := range claimNames {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: name}})
		}
	}
	return handler.TypedFuncs[client.Object, reconcile.Request]{
		CreateFunc: func(_ context.Context, e event.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(e.Object, false, q)
		},
		UpdateFunc: func(_ context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(e.ObjectNew, false, q)
		},
		DeleteFunc: func(_ context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(e.Object, true, q)
		},
	}
}
