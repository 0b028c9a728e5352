// Package state is Stowage's in-memory view of the cluster: nodes and the
// NodeClaims behind them, the pods bound to them or nominated to claims still
// launching, the NodePools and NodeClasses, and what the scheduler must respect
// (DaemonSets, PDBs, volumes). Informers feed it (see package informer); the
// simulator can feed it directly. Deciders read it only through Snapshot, and
// only once Synced says the view is complete.
package state

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// DefaultCreatedClaimTimeout bounds how long Synced waits for the informer to
// show a NodeClaim this process created. A claim deleted before the watch saw
// it would otherwise keep the view unsynced forever.
const DefaultCreatedClaimTimeout = time.Minute

// Cluster is the in-memory cluster view. It is safe for concurrent use. The
// objects it hands out are shared with its feeders (informer caches) and must
// be treated as read-only.
type Cluster struct {
	clk          clock.PassiveClock
	claimTimeout time.Duration

	mu       sync.RWMutex
	nodes    map[string]*stateNode // provider id (or nodeclaim/<name>, node/<name>) -> node
	nodeKeys map[string]string     // node name -> key in nodes
	// claimKeys is nodeclaim name -> key in nodes.
	claimKeys map[string]string
	pods      objects[*corev1.Pod]
	// pending is the pods not bound, not finished and not being deleted, so
	// that the questions asked every round about them do not scan every pod.
	pending     objects[*corev1.Pod]
	nominations map[string]nomination // pod namespace/name -> where it is expected to land
	// node name -> the running pods bound to it, kept in order as
	// pods change so that a snapshot need not scan every pod
	bound   map[string]*boundPods
	created map[string]time.Time // nodeclaim name -> when this process created it, until the informer shows it
	// deletedClaims is nodeclaim name -> when a feeder saw it deleted, kept
	// for claimTimeout so that a late NodeClaimCreated does not bring it back.
	deletedClaims map[string]time.Time
	// podEvents is node name -> when a pod last bound to it or left it.
	podEvents map[string]time.Time

	nodePools      objects[*v1alpha1.NodePool]
	nodeClasses    objects[*v1alpha1.NodeClass]
	daemonSets     objects[*appsv1.DaemonSet]
	pdbs           objects[*policyv1.PodDisruptionBudget]
	pvcs           objects[*corev1.PersistentVolumeClaim]
	pvs            objects[*corev1.PersistentVolume]
	storageClasses objects[*storagev1.StorageClass]
	// priorityClasses give a pod without spec.priority its value (priorityclasses.go)
	priorityClasses objects[*schedulingv1.PriorityClass]

	// bookings are the room booked for pods that do not exist yet, by owner (bookings.go)
	bookings map[string]scheduler.Booking

	syncChecks []func() bool
	// gen counts the changes to the view, so that a reader can tell it has
	// not changed since it last looked.
	gen uint64
}

// Generation changes whenever the view does; the same value means nothing
// was recorded in between.
func (c *Cluster) Generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// NewCluster returns an empty view. clk times how long a created NodeClaim may
// stay invisible before Synced stops waiting for it.
func NewCluster(clk clock.PassiveClock) *Cluster {
	return &Cluster{
		clk: clk, claimTimeout: DefaultCreatedClaimTimeout,
		nodes: map[string]*stateNode{}, nodeKeys: map[string]string{}, claimKeys: map[string]string{},
		pods: objects[*corev1.Pod]{}, pending: objects[*corev1.Pod]{}, nominations: map[string]nomination{}, bound: map[string]*boundPods{},
		created: map[string]time.Time{}, deletedClaims: map[string]time.Time{}, podEvents: map[string]time.Time{},
		nodePools: objects[*v1alpha1.NodePool]{}, nodeClasses: objects[*v1alpha1.NodeClass]{},
		daemonSets: objects[*appsv1.DaemonSet]{}, pdbs: objects[*policyv1.PodDisruptionBudget]{},
		pvcs: objects[*corev1.PersistentVolumeClaim]{}, pvs: objects[*corev1.PersistentVolume]{},
		storageClasses: objects[*storagev1.StorageClass]{}, priorityClasses: objects[*schedulingv1.PriorityClass]{},
	}
}

// AddSyncCheck adds a check Synced requires, typically an informer handler
// registration's HasSynced.
func (c *Cluster) AddSyncCheck(check func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.syncChecks = append(c.syncChecks, check)
}

// Synced reports whether the view is complete: every sync check passes (each
// informer has delivered its initial list) and every NodeClaim recorded with
// NodeClaimCreated has been seen by the feeders. A decision made on an
// unsynced view could launch a node twice or delete one still in use.
func (c *Cluster) Synced(_ context.Context) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, check := range c.syncChecks {
		if !check() {
			return false
		}
	}
	now := c.clk.Now()
	for name, at := range c.created {
		if now.Sub(at) >= c.claimTimeout {
			delete(c.created, name)
		}
	}
	for name, at := range c.deletedClaims {
		if now.Sub(at) >= c.claimTimeout {
			delete(c.deletedClaims, name)
		}
	}
	return len(c.created) == 0
}

// UpdatePod records a pod. A pod that binds loses its nomination; a pod
// already bound keeps one (the provisioner nominates the pods of a node being
// removed to their next home).
func (c *Cluster) UpdatePod(pod *corev1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	k := key(pod)
	old := c.pods[k]
	c.podEvent(old, pod)
	c.unbind(k)
	c.pods.put(pod)
	if pending(pod) {
		c.pending.put(pod)
	} else {
		c.pending.remove(pod)
	}
	if pod.Spec.NodeName != "" {
		if old == nil || old.Spec.NodeName != pod.Spec.NodeName {
			delete(c.nominations, k)
		}
		if !isTerminal(pod) {
			if c.bound[pod.Spec.NodeName] == nil {
				c.bound[pod.Spec.NodeName] = &boundPods{}
			}
			c.bound[pod.Spec.NodeName].put(k, pod)
		}
	}
}

// DeletePod forgets a pod and its nomination.
func (c *Cluster) DeletePod(pod *corev1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.podEvent(c.pods[key(pod)], nil)
	c.unbind(key(pod))
	c.pods.remove(pod)
	c.pending.remove(pod)
	delete(c.nominations, key(pod))
}

// podEvent records when a pod moves from old's node to updated's (nil for
// none), counting a finished pod on none. c.mu is held.
func (c *Cluster) podEvent(old, updated *corev1.Pod) {
	from, to := runsOn(old), runsOn(updated)
	if from == to {
		return
	}
	now := c.clk.Now()
	for _, node := range []string{from, to} {
		if node != "" {
			c.podEvents[node] = now
		}
	}
}

// runsOn is the node a pod is bound to and not finished on, or "".
func runsOn(pod *corev1.Pod) string {
	if pod == nil || isTerminal(pod) {
		return ""
	}
	return pod.Spec.NodeName
}

// unbind drops the pod recorded under k from its node's pods. c.mu is held.
func (c *Cluster) unbind(k string) {
	old, ok := c.pods[k]
	if !ok || old.Spec.NodeName == "" {
		return
	}
	if b := c.bound[old.Spec.NodeName]; b != nil {
		if b.remove(k); len(b.keys) == 0 {
			delete(c.bound, old.Spec.NodeName)
		}
	}
}

// Unprovided reports whether some pod waits for capacity: it is unbound, not
// finished or being deleted, kube-scheduler marked it Unschedulable, and it
// has no live nomination. Disruption removes no capacity meanwhile.
func (c *Cluster) Unprovided() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	now := c.clk.Now()
	for k, p := range c.pending {
		if !unschedulable(p) {
			continue
		}
		if nom, ok := c.nominations[k]; !ok || !c.live(nom, now) {
			return true
		}
	}
	return false
}

func unschedulable(p *corev1.Pod) bool {
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodScheduled && cond.Reason == corev1.PodReasonUnschedulable {
			return true
		}
	}
	return false
}

// PendingPods returns the pods not bound to a node, not finished and not being
// deleted, sorted by namespace and name.
func (c *Cluster) PendingPods() []*corev1.Pod {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.pending.sorted()
}

// NodePools returns the pools not being deleted, sorted by name.
func (c *Cluster) NodePools() []*v1alpha1.NodePool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.activePools()
}

func (c *Cluster) activePools() []*v1alpha1.NodePool {
	return slices.DeleteFunc(c.nodePools.sorted(), func(np *v1alpha1.NodePool) bool { return np.DeletionTimestamp != nil })
}

// PodDisruptionBudgets returns every PDB, sorted by namespace and name.
func (c *Cluster) PodDisruptionBudgets() []*policyv1.PodDisruptionBudget {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.pdbs.sorted()
}

// Snapshot returns the scheduler's input: pending, the nodes and in-flight
// claims with their bound and nominated pods, and the rest of the view, every
// list sorted so that the same view gives the same Snapshot. instanceTypes is
// NodePool name -> the types the pool may launch.
func (c *Cluster) Snapshot(pending []*corev1.Pod, instanceTypes map[string][]*cloudprovider.InstanceType) *scheduler.Snapshot {
	c.mu.RLock()
	defer c.mu.RUnlock()
	classes := map[string]*v1alpha1.NodeClass{}
	for _, nc := range c.nodeClasses {
		classes[nc.Name] = nc
	}
	return &scheduler.Snapshot{
		Pods:                   sortedPods(pending),
		Nodes:                  c.stateNodes(),
		NodePools:              c.activePools(),
		NodeClasses:            classes,
		InstanceTypes:          sortedTypes(instanceTypes),
		DaemonSets:             c.daemonSets.sorted(),
		PersistentVolumeClaims: c.pvcs.sorted(),
		PersistentVolumes:      c.pvs.sorted(),
		StorageClasses:         c.storageClasses.sorted(),
		PriorityClasses:        c.priorityValues(),
		Now:                    c.clk.Now(),
	}
}

// boundPods are the pods bound to one node, kept in namespace/name order.
type boundPods struct {
	keys []string // sorted
	pods []*corev1.Pod
}

func (b *boundPods) put(k string, pod *corev1.Pod) {
	i, found := slices.BinarySearch(b.keys, k)
	if found {
		b.pods[i] = pod
		return
	}
	b.keys = slices.Insert(b.keys, i, k)
	b.pods = slices.Insert(b.pods, i, pod)
}

func (b *boundPods) remove(k string) {
	if i, found := slices.BinarySearch(b.keys, k); found {
		b.keys = slices.Delete(b.keys, i, i+1)
		b.pods = slices.Delete(b.pods, i, i+1)
	}
}

// list returns the pods in key order; the caller must not change the slice.
func (b *boundPods) list() []*corev1.Pod { return b.pods }

// stateNodes builds the scheduler's nodes, each with its bound pods then the
// pods nominated to it, sorted by name. c.mu is held.
func (c *Cluster) stateNodes() []*scheduler.StateNode {
	// Bound pods are kept in order per node as they change: a snapshot of a
	// large cluster is taken every few seconds, and sorting every pod
	// dominated it.
	bound := map[string][]*corev1.Pod{}
	for node, b := range c.bound {
		bound[node] = b.list()
	}
	nominated, chosen := c.nominatedPods()
	v := view{bound: bound, nominated: nominated, podEvents: c.podEvents}
	out := make([]*scheduler.StateNode, 0, len(c.nodes))
	for _, n := range c.nodes {
		sn := n.snapshot(v)
		sn.Nominated = chosen[n] || c.clk.Now().Before(n.nominatedUntil)
		out = append(out, sn)
	}
	slices.SortFunc(out, func(a, b *scheduler.StateNode) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}

// LeavingNodes names the registered nodes marked for deletion: a cheaper
// question than a snapshot for a reader that acts only when they change.
func (c *Cluster) LeavingNodes() map[string]bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := map[string]bool{}
	for _, n := range c.nodes {
		if n.node != nil && n.markedForDeletion() {
			out[n.node.Name] = true
		}
	}
	return out
}

// leaving reports whether the node is marked for deletion. c.mu is held.
func (c *Cluster) leaving(node string) bool {
	n := c.find(node)
	return n != nil && n.markedForDeletion()
}

func sortedPods(pods []*corev1.Pod) []*corev1.Pod {
	out := slices.Clone(pods)
	slices.SortFunc(out, func(a, b *corev1.Pod) int { return strings.Compare(key(a), key(b)) })
	return out
}

func sortedTypes(in map[string][]*cloudprovider.InstanceType) map[string][]*cloudprovider.InstanceType {
	out := make(map[string][]*cloudprovider.InstanceType, len(in))
	for pool, types := range in {
		out[pool] = slices.SortedFunc(slices.Values(types), func(a, b *cloudprovider.InstanceType) int {
			return cmp.Compare(a.Name, b.Name)
		})
	}
	return out
}

func isTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// objects is one kind of object by namespace/name.
type objects[T client.Object] map[string]T

func (o objects[T]) put(obj T)    { o[key(obj)] = obj }
func (o objects[T]) remove(obj T) { delete(o, key(obj)) }

// sorted returns the objects by namespace/name.
func (o objects[T]) sorted() []T {
	out := make([]T, 0, len(o))
	for _, k := range slices.Sorted(maps.Keys(o)) {
		out = append(out, o[k])
	}
	return out
}

// key is namespace/name, or the name of a cluster-scoped object.
func key(obj client.Object) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + obj.GetName()
	}
	return obj.GetName()
}

func (c *Cluster) write(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	f()
}

// UpdateNodePool records a NodePool.
func (c *Cluster) UpdateNodePool(np *v1alpha1.NodePool) { c.write(func() { c.nodePools.put(np) }) }

// DeleteNodePool forgets a NodePool.
func (c *Cluster) DeleteNodePool(np *v1alpha1.NodePool) { c.write(func() { c.nodePools.remove(np) }) }

// UpdateNodeClass records a NodeClass.
func (c *Cluster) UpdateNodeClass(nc *v1alpha1.NodeClass) { c.write(func() { c.nodeClasses.put(nc) }) }

// DeleteNodeClass forgets a NodeClass.
func (c *Cluster) DeleteNodeClass(nc *v1alpha1.NodeClass) {
	c.write(func() { c.nodeClasses.remove(nc) })
}

// UpdateDaemonSet records a DaemonSet.
func (c *Cluster) UpdateDaemonSet(ds *appsv1.DaemonSet) { c.write(func() { c.daemonSets.put(ds) }) }

// DeleteDaemonSet forgets a DaemonSet.
func (c *Cluster) DeleteDaemonSet(ds *appsv1.DaemonSet) { c.write(func() { c.daemonSets.remove(ds) }) }

// UpdatePodDisruptionBudget records a PDB.
func (c *Cluster) UpdatePodDisruptionBudget(pdb *policyv1.PodDisruptionBudget) {
	c.write(func() { c.pdbs.put(pdb) })
}

// DeletePodDisruptionBudget forgets a PDB.
func (c *Cluster) DeletePodDisruptionBudget(pdb *policyv1.PodDisruptionBudget) {
	c.write(func() { c.pdbs.remove(pdb) })
}

// UpdatePersistentVolumeClaim records a PVC.
func (c *Cluster) UpdatePersistentVolumeClaim(pvc *corev1.PersistentVolumeClaim) {
	c.write(func() { c.pvcs.put(pvc) })
}

// DeletePersistentVolumeClaim forgets a PVC.
func (c *Cluster) DeletePersistentVolumeClaim(pvc *corev1.PersistentVolumeClaim) {
	c.write(func() { c.pvcs.remove(pvc) })
}

// UpdatePersistentVolume records a PV.
func (c *Cluster) UpdatePersistentVolume(pv *corev1.PersistentVolume) {
	c.write(func() { c.pvs.put(pv) })
}

// DeletePersistentVolume forgets a PV.
func (c *Cluster) DeletePersistentVolume(pv *corev1.PersistentVolume) {
	c.write(func() { c.pvs.remove(pv) })
}

// UpdateStorageClass records a StorageClass.
func (c *Cluster) UpdateStorageClass(sc *storagev1.StorageClass) {
	c.write(func() { c.storageClasses.put(sc) })
}

// DeleteStorageClass forgets a StorageClass.
func (c *Cluster) DeleteStorageClass(sc *storagev1.StorageClass) {
	c.write(func() { c.storageClasses.remove(sc) })
}
