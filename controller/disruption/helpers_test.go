package disruption_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/disruption"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler/schedulertest"
)

// epoch is where the tests' clocks start: a Sunday, 02:00 UTC.
var epoch = time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)

const zone = "test-zone-a"

// catalogue is the tests' instance types: "small" (2 vCPU, 8 GiB), "medium"
// (4, 16) and "large" (8, 32), on-demand at $0.10 per vCPU-hour and spot at
// 70% of that, in one zone; plus cheap spot-only "c1".."c20" (2 vCPU, 8 GiB)
// for the spot-to-spot rule.
func catalogue() []*cloudprovider.InstanceType {
	var out []*cloudprovider.InstanceType
	for _, t := range []struct {
		name string
		vcpu int64
	}{{"small", 2}, {"medium", 4}, {"large", 8}} {
		od := 0.10 * float64(t.vcpu)
		out = append(out, schedulertest.NewInstanceType(t.name, t.vcpu, 4*t.vcpu<<30, 110, cloudprovider.Offerings{
			{Zone: zone, CapacityType: v1alpha1.CapacityTypeOnDemand, Price: od, Available: true},
			{Zone: zone, CapacityType: v1alpha1.CapacityTypeSpot, Price: 0.7 * od, Available: true},
		}))
	}
	return out
}

// spotTypes are n spot-only types of 2 vCPU and 8 GiB priced from $0.05 up.
func spotTypes(n int) []*cloudprovider.InstanceType {
	var out []*cloudprovider.InstanceType
	for i := range n {
		out = append(out, schedulertest.NewInstanceType(fmt.Sprintf("c%d", i+1), 2, 8<<30, 110, cloudprovider.Offerings{
			{Zone: zone, CapacityType: v1alpha1.CapacityTypeSpot, Price: 0.05 + 0.001*float64(i), Available: true},
		}))
	}
	return out
}

func typeNamed(types []*cloudprovider.InstanceType, name string) *cloudprovider.InstanceType {
	for _, it := range types {
		if it.Name == name {
			return it
		}
	}
	panic("no instance type " + name)
}

// pool is a pool that consolidates after consolidateAfter ("Never" for
// never) with the given budgets (the default 10% when none). It allows spot,
// and the tests' nodes run on-demand: it returns none of them to spot, which
// return_test.go tests on pools of its own.
func pool(name, consolidateAfter string, budgets ...v1alpha1.Budget) *v1alpha1.NodePool {
	return &v1alpha1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.NodePoolSpec{
			Template: v1alpha1.NodeClaimTemplate{Spec: v1alpha1.NodeClaimTemplateSpec{
				NodeClassRef: &v1alpha1.NodeClassReference{Group: v1alpha1.Group, Kind: "NodeClass", Name: "default"},
			}},
			Disruption: v1alpha1.Disruption{
				ConsolidateAfter: ptr.To(v1alpha1.MustParseDuration(consolidateAfter)),
				ReturnAfter:      ptr.To(v1alpha1.MustParseDuration(v1alpha1.Never)),
				Budgets:          budgets,
			},
		},
	}
}

// budget allows nodes, during the window if schedule is set, for reasons.
func budget(nodes, schedule string, duration time.Duration, reasons ...string) v1alpha1.Budget {
	b := v1alpha1.Budget{Nodes: nodes, Reasons: reasons}
	if schedule != "" {
		b.Schedule, b.Duration = &schedule, &metav1.Duration{Duration: duration}
	}
	return b
}

// node is a Ready "medium" on-demand node of pool, with an Initialized claim
// of the same name created at epoch+age, running pods.
func node(name, poolName string, age time.Duration, pods ...*corev1.Pod) *scheduler.StateNode {
	return typedNode(name, poolName, "medium", v1alpha1.CapacityTypeOnDemand, age, pods...)
}

// typedNode is node on an instance type of catalogue and a capacity type.
func typedNode(name, poolName, instanceType, capacityType string, age time.Duration, pods ...*corev1.Pod) *scheduler.StateNode {
	providerID := "aws:///" + zone + "/i-" + name
	it := typeNamed(append(catalogue(), spotTypes(20)...), instanceType)
	claim := &v1alpha1.NodeClaim{ObjectMeta: metav1.ObjectMeta{
		Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{v1alpha1.LabelNodePool: poolName},
		CreationTimestamp: metav1.NewTime(epoch.Add(age)), Annotations: map[string]string{},
	}}
	claim.Status.ProviderID, claim.Status.NodeName = providerID, name
	claim.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionInitialized, Status: metav1.ConditionTrue,
		Reason: "Initialized", LastTransitionTime: metav1.NewTime(epoch.Add(-time.Hour))}}
	labels := it.Requirements.Labels()
	labels[corev1.LabelTopologyZone], labels[v1alpha1.LabelCapacityType] = zone, capacityType
	labels[v1alpha1.LabelNodePool], labels[corev1.LabelHostname] = poolName, name
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       corev1.NodeSpec{ProviderID: providerID},
		Status: corev1.NodeStatus{Allocatable: it.Allocatable().List(), Capacity: it.Capacity.List(),
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
				LastTransitionTime: metav1.NewTime(epoch.Add(-time.Hour))}}},
	}
	for _, p := range pods {
		p.Spec.NodeName = name
	}
	return &scheduler.StateNode{Node: n, NodeClaim: claim, Pods: pods}
}

func pod(name string) *corev1.Pod { return sized(name, "", "") }

// sized is a running pod requesting cpu and memory ("" for none).
func sized(name, cpu, memory string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{"app": name}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.invalid/app:1"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	if cpu != "" {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu),
			corev1.ResourceMemory: resource.MustParse(memory)}
	}
	return p
}

func daemonPod(name string) *corev1.Pod {
	p := pod(name)
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ds", UID: "ds", Controller: ptr.To(true)}}
	return p
}

func mirrorPod(name string) *corev1.Pod {
	p := pod(name)
	p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
	return p
}

func finishedPod(name string) *corev1.Pod {
	p := pod(name)
	p.Status.Phase = corev1.PodSucceeded
	return p
}

func annotated[T client.Object](obj T, key string) T { return annotatedWith(obj, key, "true") }

func annotatedWith[T client.Object](obj T, key, value string) T {
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[key] = value
	obj.SetAnnotations(a)
	return obj
}

func notReady(sn *scheduler.StateNode) *scheduler.StateNode {
	sn.Node.Status.Conditions[0].Status = corev1.ConditionFalse
	return sn
}

func marked(sn *scheduler.StateNode) *scheduler.StateNode {
	sn.MarkedForDeletion = true
	return sn
}

func terminating(sn *scheduler.StateNode) *scheduler.StateNode {
	sn.NodeClaim.Status.Conditions = append(sn.NodeClaim.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionInstanceTerminating,
		Status: metav1.ConditionTrue, Reason: "Drained", LastTransitionTime: metav1.NewTime(epoch)})
	return sn
}

func drifted(sn *scheduler.StateNode) *scheduler.StateNode {
	sn.NodeClaim.Status.Conditions = append(sn.NodeClaim.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionDrifted,
		Status: metav1.ConditionTrue, Reason: "NodePoolDrifted", LastTransitionTime: metav1.NewTime(epoch)})
	return sn
}

func nodes(n int, poolName string) []*scheduler.StateNode {
	out := make([]*scheduler.StateNode, n)
	for i := range out {
		out[i] = node(fmt.Sprintf("n%02d", i), poolName, time.Duration(i)*time.Minute)
	}
	return out
}

// round is a Round over the nodes and pools at now, every pool offering
// types (catalogue when nil).
func round(now time.Time, pools []*v1alpha1.NodePool, types []*cloudprovider.InstanceType, sns ...*scheduler.StateNode) disruption.Round {
	if types == nil {
		types = catalogue()
	}
	byPool := map[string][]*cloudprovider.InstanceType{}
	for _, p := range pools {
		byPool[p.Name] = types
	}
	snap := &scheduler.Snapshot{Nodes: sns, NodePools: pools, InstanceTypes: byPool}
	return disruption.Round{Snapshot: snap, Now: now, Pools: disruption.DefaultedPools(pools)}
}

// decide runs one round of m.
func decide(t *testing.T, m disruption.Method, r disruption.Round) disruption.Decision {
	t.Helper()
	d, err := disruption.Decide(context.Background(), m, r, disruption.NewCandidates(&r))
	fatalIf(t, err)
	return d
}

// commanded renders a decision's commands as "Reason[node node]", with
// "+type" per replacement.
func commanded(d disruption.Decision) []string {
	var out []string
	for _, cmd := range d.Commands {
		s := cmd.Reason + "[" + strings.Join(cmd.Names(), " ") + "]"
		for _, r := range cmd.Replacements {
			s += "+" + r.InstanceTypes[0].Name
		}
		out = append(out, s)
	}
	return out
}

// blockedNames renders a decision's blocked candidates as "node: why".
func blockedNames(d disruption.Decision) []string {
	var out []string
	for _, b := range d.Blocked {
		out = append(out, b.Candidate.Name()+": "+b.Why)
	}
	return out
}

// blockedKinds renders a decision's blocked candidates as "node: kind".
func blockedKinds(d disruption.Decision) []string {
	var out []string
	for _, b := range d.Blocked {
		out = append(out, b.Candidate.Name()+": "+b.Kind)
	}
	return out
}

// event is one event a recorder saw.
type event struct{ Kind, Name, Type, Reason, Note string }

// recorder keeps every event published.
type recorder struct {
	mu     sync.Mutex
	events []event
}

func (r *recorder) Eventf(regarding, _ runtime.Object, eventtype, reason, _, note string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	obj := regarding.(client.Object)
	kind := "Node"
	if _, ok := regarding.(*v1alpha1.NodeClaim); ok {
		kind = "NodeClaim"
	}
	r.events = append(r.events, event{kind, obj.GetName(), eventtype, reason, fmt.Sprintf(note, args...)})
}

// take returns the events recorded since the last call as "Kind/name Reason".
func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		out = append(out, e.Kind+"/"+e.Name+" "+e.Reason)
	}
	r.events = nil
	return out
}

// notes returns the notes of the events recorded so far with the reason.
func (r *recorder) notes(reason string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		if e.Reason == reason {
			out = append(out, e.Kind+"/"+e.Name+": "+e.Note)
		}
	}
	return out
}

func fatalIf(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
