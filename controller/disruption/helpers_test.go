package disruption_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/disruption"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// epoch is where the tests' clocks start: a Sunday, 02:00 UTC.
var epoch = time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)

// pool is a pool that consolidates after consolidateAfter ("Never" for
// never) with the given budgets (the default 10% when none).
func pool(name, consolidateAfter string, budgets ...v1alpha1.Budget) *v1alpha1.NodePool {
	return &v1alpha1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.NodePoolSpec{
			Template: v1alpha1.NodeClaimTemplate{Spec: v1alpha1.NodeClaimTemplateSpec{
				NodeClassRef: &v1alpha1.NodeClassReference{Group: v1alpha1.Group, Kind: "NodeClass", Name: "default"},
			}},
			Disruption: v1alpha1.Disruption{
				ConsolidateAfter: ptr.To(v1alpha1.MustParseDuration(consolidateAfter)),
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

// node is a Ready node of pool, with a Ready claim of the same name created
// at epoch+age, running pods.
func node(name, poolName string, age time.Duration, pods ...*corev1.Pod) *scheduler.StateNode {
	providerID := "aws:///us-east-1a/i-" + name
	claim := &v1alpha1.NodeClaim{ObjectMeta: metav1.ObjectMeta{
		Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{v1alpha1.LabelNodePool: poolName},
		CreationTimestamp: metav1.NewTime(epoch.Add(age)),
	}}
	claim.Status.ProviderID, claim.Status.NodeName = providerID, name
	claim.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue,
		Reason: "Ready", LastTransitionTime: metav1.NewTime(epoch)}}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1alpha1.LabelNodePool: poolName}},
		Spec:       corev1.NodeSpec{ProviderID: providerID},
		Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
	}
	for _, p := range pods {
		p.Spec.NodeName = name
	}
	return &scheduler.StateNode{Node: n, NodeClaim: claim, Pods: pods}
}

func pod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.invalid/app:1"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
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

func annotated[T client.Object](obj T, key string) T {
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[key] = "true"
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

func nodes(n int, poolName string) []*scheduler.StateNode {
	out := make([]*scheduler.StateNode, n)
	for i := range out {
		out[i] = node(fmt.Sprintf("n%02d", i), poolName, time.Duration(i)*time.Minute)
	}
	return out
}

// commanded renders a decision's commands as "Reason[node node]".
func commanded(d disruption.Decision) []string {
	var out []string
	for _, cmd := range d.Commands {
		var names []string
		for _, c := range cmd.Candidates {
			names = append(names, c.Name())
		}
		out = append(out, cmd.Reason+"["+strings.Join(names, " ")+"]")
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

func fatalIf(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
