package headtohead

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Fleet watches the bed's pods and nodes (informers, so that the watching
// costs the same whichever system runs) and keeps when the system's fleet
// last changed. A node is in the fleet from its registration until the
// system takes it away: its deletion begins, or it carries the system's
// disrupted taint. A node thus leaves at the same step on both sides, and
// what happens after (Karpenter's kwok deletes the Node at once; Stowage's
// instance spends the emulator's shutting-down delay first) does not count.
type Fleet struct {
	pods, nodes cache.Indexer
	poolLabel   string
	taint       string

	mu         sync.Mutex
	members    map[string]time.Time // node name -> when it joined the fleet
	lastChange time.Time
}

// podsByNode indexes pods by the node they are bound to.
const podsByNode = "node"

// Watch starts watching through cs until ctx ends, for a system whose nodes
// carry poolLabel and whose disrupted taint is taint; it returns once the
// informers have synced.
func Watch(ctx context.Context, cs kubernetes.Interface, poolLabel, taint string) (*Fleet, error) {
	factory := informers.NewSharedInformerFactory(cs, 0)
	pods := factory.Core().V1().Pods().Informer()
	nodes := factory.Core().V1().Nodes().Informer()
	if err := pods.AddIndexers(cache.Indexers{podsByNode: func(o any) ([]string, error) {
		return []string{o.(*corev1.Pod).Spec.NodeName}, nil
	}}); err != nil {
		return nil, err
	}
	f := &Fleet{pods: pods.GetIndexer(), nodes: nodes.GetIndexer(), poolLabel: poolLabel, taint: taint,
		members: map[string]time.Time{}, lastChange: time.Now()}
	if _, err := nodes.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { f.observe(o, false) },
		UpdateFunc: func(_, o any) { f.observe(o, false) },
		DeleteFunc: func(o any) { f.observe(o, true) },
	}); err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return nil, fmt.Errorf("syncing the %v informer", typ)
		}
	}
	return f, nil
}

// observe records a node's joining or leaving the fleet.
func (f *Fleet) observe(o any, deleted bool) {
	if tomb, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o, deleted = tomb.Obj, true
	}
	n, ok := o.(*corev1.Node)
	if !ok || n.Labels[f.poolLabel] == "" {
		return
	}
	in := !deleted && f.inFleet(n)
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, was := f.members[n.Name]; was == in {
		return
	}
	now := time.Now()
	if in {
		f.members[n.Name] = now
	} else {
		delete(f.members, n.Name)
	}
	f.lastChange = now
}

func (f *Fleet) inFleet(n *corev1.Node) bool {
	if n.DeletionTimestamp != nil {
		return false
	}
	for _, t := range n.Spec.Taints {
		if t.Key == f.taint {
			return false
		}
	}
	return true
}

// LastChange is when a node last joined or left the fleet.
func (f *Fleet) LastChange() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lastChange
}

// Members returns node name -> when it joined, for the fleet now.
func (f *Fleet) Members() map[string]time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]time.Time, len(f.members))
	for k, v := range f.members {
		out[k] = v
	}
	return out
}

// Nodes returns the fleet's nodes.
func (f *Fleet) Nodes() []corev1.Node {
	var out []corev1.Node
	for name := range f.Members() {
		if o, ok, err := f.nodes.GetByKey(name); err == nil && ok {
			out = append(out, *o.(*corev1.Node))
		}
	}
	return out
}

// Running counts the pods of the namespace that run and are not being deleted.
func (f *Fleet) Running(namespace string) int {
	n := 0
	for _, o := range f.pods.List() {
		p := o.(*corev1.Pod)
		if p.Namespace == namespace && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

// NodesRunning returns the names of the fleet's nodes running a pod of app.
func (f *Fleet) NodesRunning(namespace, app string) map[string]bool {
	out := map[string]bool{}
	for _, o := range f.pods.List() {
		p := o.(*corev1.Pod)
		if p.Namespace == namespace && p.Labels["app"] == app && p.Spec.NodeName != "" && p.Status.Phase == corev1.PodRunning {
			out[p.Spec.NodeName] = true
		}
	}
	return out
}

// Snapshot is the fleet at one moment, as the suite's report measures it.
type Snapshot struct {
	Nodes int
	// CostPerHour is the sum of the nodes' on-demand prices.
	CostPerHour float64
	// CPUUtil and MemUtil are the mean over the nodes of the requests of the
	// pods bound to a node over its allocatable.
	CPUUtil, MemUtil float64
}

// Snapshot measures the fleet now, pricing nodes by their instance type.
func (f *Fleet) Snapshot(prices map[string]float64) (Snapshot, error) {
	var s Snapshot
	for name := range f.Members() {
		o, ok, err := f.nodes.GetByKey(name)
		if err != nil || !ok {
			continue // gone since
		}
		n := o.(*corev1.Node)
		typ := n.Labels[corev1.LabelInstanceTypeStable]
		price, ok := prices[typ]
		if !ok {
			return s, fmt.Errorf("node %s is of type %q, which the catalogue does not price", n.Name, typ)
		}
		cpu, mem, err := f.requests(n.Name)
		if err != nil {
			return s, err
		}
		s.Nodes++
		s.CostPerHour += price
		s.CPUUtil += share(cpu, n.Status.Allocatable[corev1.ResourceCPU])
		s.MemUtil += share(mem, n.Status.Allocatable[corev1.ResourceMemory])
	}
	if s.Nodes > 0 {
		s.CPUUtil /= float64(s.Nodes)
		s.MemUtil /= float64(s.Nodes)
	}
	return s, nil
}

// requests sums the CPU and memory requests of the live pods bound to node.
func (f *Fleet) requests(node string) (cpu, mem resource.Quantity, err error) {
	pods, err := f.pods.ByIndex(podsByNode, node)
	if err != nil {
		return cpu, mem, err
	}
	for _, o := range pods {
		p := o.(*corev1.Pod)
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for _, c := range p.Spec.Containers {
			cpu.Add(c.Resources.Requests[corev1.ResourceCPU])
			mem.Add(c.Resources.Requests[corev1.ResourceMemory])
		}
	}
	return cpu, mem, nil
}

func share(used, allocatable resource.Quantity) float64 {
	if allocatable.IsZero() {
		return 0
	}
	return used.AsApproximateFloat64() / allocatable.AsApproximateFloat64()
}
