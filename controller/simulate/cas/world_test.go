package cas_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/scheduling"
	"github.com/stowage-dev/stowage/controller/simulate/cas"
)

var t0 = time.Date(2026, 8, 25, 2, 0, 0, 0, time.UTC)

// fakeWorld is a cluster whose launches land as not-ready nodes and whose
// shortages are listed per group/zone.
type fakeWorld struct {
	clk     *clocktesting.FakeClock
	pending []*corev1.Pod
	nodes   []cas.Node
	// group/zone -> the cloud has no capacity there
	short     map[string]bool
	launches  []launchCall
	removed   []removal
	removeErr error
	seq       int
}

type launchCall struct {
	at                time.Duration // since t0
	group, zone       string
	asked, got        int
	insufficientError bool
}

type removal struct {
	at   time.Duration
	node string
}

func newWorld() *fakeWorld {
	return &fakeWorld{clk: clocktesting.NewFakeClock(t0), short: map[string]bool{}}
}

func (w *fakeWorld) Unschedulable() []*corev1.Pod { return w.pending }

func (w *fakeWorld) Nodes() []cas.Node { return slices.Clone(w.nodes) }

func (w *fakeWorld) Launch(_ context.Context, g *cas.NodeGroup, zone string, n int) (int, error) {
	call := launchCall{at: w.clk.Since(t0), group: g.Name, zone: zone, asked: n}
	if w.short[g.Name+"/"+zone] {
		call.insufficientError = true
		w.launches = append(w.launches, call)
		return 0, cloudprovider.NewInsufficientCapacityError("no capacity", cloudprovider.UnavailableOffering{
			InstanceType: g.InstanceType, Zone: zone, CapacityType: g.CapacityType, Reason: "InsufficientInstanceCapacity"})
	}
	for range n {
		w.seq++
		w.nodes = append(w.nodes, cas.Node{Name: fmt.Sprintf("%s-%03d", g.Name, w.seq), Group: g.Name, Zone: zone,
			Allocatable: g.Allocatable, CreatedAt: w.clk.Now()})
	}
	call.got = n
	w.launches = append(w.launches, call)
	return n, nil
}

func (w *fakeWorld) Remove(_ context.Context, name string) error {
	if w.removeErr != nil {
		return w.removeErr
	}
	w.removed = append(w.removed, removal{at: w.clk.Since(t0), node: name})
	w.nodes = slices.DeleteFunc(w.nodes, func(n cas.Node) bool { return n.Name == name })
	return nil
}

// run calls RunOnce every scan interval for d (the first call at the current
// time, the last strictly before now+d) and returns every action.
func run(t *testing.T, a *cas.Autoscaler, w *fakeWorld, d time.Duration) []cas.Action {
	t.Helper()
	var out []cas.Action
	step := a.Config().ScanInterval
	for range int(d / step) {
		out = append(out, a.RunOnce(context.Background(), w)...)
		w.clk.Step(step)
	}
	return out
}

func ofKind(actions []cas.Action, kind cas.ActionKind) []cas.Action {
	return slices.DeleteFunc(slices.Clone(actions), func(a cas.Action) bool { return a.Kind != kind })
}

func newAutoscaler(t *testing.T, w *fakeWorld, groups ...cas.NodeGroup) *cas.Autoscaler {
	t.Helper()
	a, err := cas.New(w.clk, groups)
	if err != nil {
		t.Fatalf("building autoscaler: %v", err)
	}
	return a
}

func resources(cpu string, mem string) scheduling.Resources {
	r := scheduling.FromList(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)})
	r.Pods = 110
	return r
}

func group(name, instanceType string, alloc scheduling.Resources, maxSize int, zones ...string) cas.NodeGroup {
	if len(zones) == 0 {
		zones = []string{"us-east-1a"}
	}
	return cas.NodeGroup{Name: name, InstanceType: instanceType, Zones: zones, CapacityType: "on-demand", MaxSize: maxSize, Allocatable: alloc}
}

// pod builds a pod owned by a ReplicaSet, adjusted by opts.
func pod(name, cpu, mem string, opts ...func(*corev1.Pod)) *corev1.Pod {
	yes := true
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", Controller: &yes}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}}}},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func pods(prefix string, n int, cpu, mem string, opts ...func(*corev1.Pod)) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range n {
		out = append(out, pod(fmt.Sprintf("%s-%02d", prefix, i), cpu, mem, opts...))
	}
	return out
}

func daemonSetPod(p *corev1.Pod) {
	p.OwnerReferences[0].Kind = "DaemonSet"
}

// readyNode is a Ready node of group g running pods, created at t0-1h.
func readyNode(name string, g cas.NodeGroup, ps ...*corev1.Pod) cas.Node {
	n := cas.Node{Name: name, Group: g.Name, Zone: g.Zones[0], Allocatable: g.Allocatable, Pods: ps, Ready: true, CreatedAt: t0.Add(-time.Hour)}
	for _, p := range ps {
		n.Requested = n.Requested.Add(scheduling.PodRequests(p))
	}
	return n
}

func withGPUs(r scheduling.Resources, n int64) scheduling.Resources {
	r.Set(cas.ResourceGPU, n)
	return r
}

func gpus(n int64) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests[cas.ResourceGPU] = *resource.NewQuantity(n, resource.DecimalSI)
	}
}
