package nodeclass_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/events/eventstest"
	"github.com/stowage-dev/stowage/controller/nodeclaim/nodeclaimtest"
	"github.com/stowage-dev/stowage/controller/nodeclass"
)

func TestANodeClassThatResolvesIsReadyAndPrintedSo(t *testing.T) {
	w := start(t, ready())
	nc := w.nodeClass()
	cond := w.expectReady(nc, metav1.ConditionTrue)
	if !cond.LastTransitionTime.Time.Equal(w.Clock.Now().Truncate(time.Second)) {
		t.Errorf("Ready changed at %v, want the clock's %v", cond.LastTransitionTime, w.Clock.Now())
	}
	if cond.Reason != "Resolved" {
		t.Errorf("Ready has reason %q, want the resolver's Resolved", cond.Reason)
	}
	if len(nc.Status.Subnets) != 1 || nc.Status.Subnets[0].ID != "subnet-0a" || nc.Status.InstanceProfile != "stowage-profile" {
		t.Errorf("status %+v does not carry what the resolver resolved", nc.Status)
	}
	if got := w.Printed("nodeclasses", nc.Name)["Ready"]; got != "True" {
		t.Errorf("kubectl prints Ready %q, want True", got)
	}
	if e := w.event(nc.Name, nodeclass.EventReady, 1)[0]; e.Type != corev1.EventTypeNormal {
		t.Errorf("the ready event is %s, want Normal", e.Type)
	}
	if got := gauge(t, nc.Name); got != 1 {
		t.Errorf("stowage_nodeclass_ready is %v, want 1", got)
	}
}

func TestANodeClassThatDoesNotResolveIsNotReadyWithTheResolversMessage(t *testing.T) {
	w := start(t, unauthorized())
	nc := w.nodeClass()
	cond := w.expectReady(nc, metav1.ConditionFalse)
	if cond.Reason != "Unauthorized" || !strings.Contains(cond.Message, "iam:GetInstanceProfile") {
		t.Errorf("Ready is %s: %s, want Unauthorized naming iam:GetInstanceProfile", cond.Reason, cond.Message)
	}
	if got := w.Printed("nodeclasses", nc.Name)["Ready"]; got != "False" {
		t.Errorf("kubectl prints Ready %q, want False", got)
	}
	e := w.event(nc.Name, nodeclass.EventNotReady, 1)[0]
	if e.Type != corev1.EventTypeWarning || !strings.Contains(e.Note, "iam:GetInstanceProfile") {
		t.Errorf("the not-ready event is %s %q, want a Warning naming the IAM action", e.Type, e.Note)
	}
	if got := gauge(t, nc.Name); got != 0 {
		t.Errorf("stowage_nodeclass_ready is %v, want 0", got)
	}
}

func TestASpecChangeResolvesTheNodeClassAgain(t *testing.T) {
	w := start(t, ready())
	nc := w.nodeClass()
	first := w.expectReady(nc, metav1.ConditionTrue)

	w.Clock.Step(time.Hour)
	w.resolver.set(unauthorized())
	w.Update(nc, func() { nc.Spec.Role = "AnotherRole-" + w.ID })
	cond := w.expectReady(nc, metav1.ConditionFalse)
	if cond.ObservedGeneration != 2 {
		t.Errorf("Ready observed generation %d, want 2", cond.ObservedGeneration)
	}
	if want := first.LastTransitionTime.Add(time.Hour); !cond.LastTransitionTime.Time.Equal(want) {
		t.Errorf("Ready changed at %v, want %v", cond.LastTransitionTime, want)
	}
	if len(nc.Status.Subnets) != 0 {
		t.Errorf("a NodeClass that no longer resolves keeps subnets %v", nc.Status.Subnets)
	}
	w.event(nc.Name, nodeclass.EventNotReady, 1)
}

func TestAResyncKeepsTheTransitionTimeAndRequeues(t *testing.T) {
	w := start(t, ready())
	nc := w.nodeClass()
	first := w.expectReady(nc, metav1.ConditionTrue)
	rv := nc.ResourceVersion

	w.Clock.Step(time.Hour)
	if res := w.reconcile(nc); res.RequeueAfter != nodeclass.DefaultResync {
		t.Errorf("requeued after %v, want %v", res.RequeueAfter, nodeclass.DefaultResync)
	}
	if err := w.Get(nc); err != nil {
		t.Fatal(err)
	}
	if nc.ResourceVersion != rv {
		t.Errorf("an unchanged resolution wrote the NodeClass (resource version %s, was %s)", nc.ResourceVersion, rv)
	}
	cond := w.expectReady(nc, metav1.ConditionTrue)
	if !cond.LastTransitionTime.Equal(&first.LastTransitionTime) {
		t.Errorf("Ready's transition time moved from %v to %v while it stayed True", first.LastTransitionTime, cond.LastTransitionTime)
	}
	w.event(nc.Name, nodeclass.EventReady, 1)
}

func TestMergeStampsTheConditionsAndAddsAnUnknownReady(t *testing.T) {
	now := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	earlier := metav1.NewTime(now.Add(-time.Hour))
	current := v1alpha1.NodeClassStatus{Conditions: []metav1.Condition{
		{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Resolved", LastTransitionTime: earlier},
		{Type: "Stale", Status: metav1.ConditionTrue, Reason: "Old", LastTransitionTime: earlier},
	}}
	tests := []struct {
		name     string
		resolved v1alpha1.NodeClassStatus
		want     metav1.Condition
	}{
		{"a held status keeps its time", ready(), metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue,
			Reason: "Resolved", ObservedGeneration: 3, LastTransitionTime: earlier}},
		{"a changed status takes now", unauthorized(), metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse,
			Reason: "Unauthorized", Message: unauthorized().Conditions[0].Message, ObservedGeneration: 3, LastTransitionTime: metav1.NewTime(now)}},
		{"no Ready is Unknown", v1alpha1.NodeClassStatus{}, metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionUnknown,
			Reason: nodeclass.ReasonNotReported, Message: "The cloud provider reported no Ready condition", ObservedGeneration: 3,
			LastTransitionTime: metav1.NewTime(now)}},
		{"a bad reason is Unknown", v1alpha1.NodeClassStatus{Conditions: []metav1.Condition{{Type: v1alpha1.ConditionReady,
			Status: metav1.ConditionTrue, Reason: "not camel case"}}}, metav1.Condition{Type: v1alpha1.ConditionReady,
			Status: metav1.ConditionTrue, Reason: "Unknown", ObservedGeneration: 3, LastTransitionTime: earlier}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := nodeclass.Merge(current, tt.resolved, 3, now)
			if len(got.Conditions) != 1 || got.Conditions[0] != tt.want {
				t.Errorf("conditions %+v, want only %+v", got.Conditions, tt.want)
			}
		})
	}
}

// replacingResolver also names userData settings that give way (as the AWS
// cloud provider does).
type replacingResolver struct {
	*resolver
	replaced []string
}

func (r replacingResolver) ReplacedUserData(*v1alpha1.NodeClass) ([]string, error) {
	return r.replaced, nil
}

// TestUserDataSettingsThatGiveWayAreToldOncePerGeneration: a Warning event
// names the userData settings Stowage's own replace, once per generation of
// the NodeClass, not on every resync.
func TestUserDataSettingsThatGiveWayAreToldOncePerGeneration(t *testing.T) {
	e := nodeclaimtest.New(t)
	res := replacingResolver{resolver: &resolver{status: ready()}, replaced: []string{"settings.kubernetes.cluster-name", "settings.kubernetes.max-pods"}}
	w := &world{Env: e, resolver: res.resolver, events: &eventstest.Recorder{}}
	w.ctrl = nodeclass.New(e.Clock, e.Mgr.GetClient(), res, nodeclass.Options{Recorder: w.events})
	if err := w.ctrl.Register(e.Mgr); err != nil {
		t.Fatal(err)
	}
	e.Start()
	nc := w.nodeClass()
	w.expectReady(nc, metav1.ConditionTrue)
	ev := w.event(nc.Name, nodeclass.EventUserDataReplaced, 1)[0]
	if ev.Type != corev1.EventTypeWarning || !strings.Contains(ev.Note, "spec.userData sets settings.kubernetes.cluster-name, settings.kubernetes.max-pods") {
		t.Errorf("event %s %q, want a Warning naming both settings", ev.Type, ev.Note)
	}
	w.reconcile(nc)
	w.event(nc.Name, nodeclass.EventUserDataReplaced, 1)
	w.Update(nc, func() { nc.Spec.UserData = ptr.To("[settings.kubernetes]\nmax-pods = 10\n") })
	w.expectReady(nc, metav1.ConditionTrue)
	w.event(nc.Name, nodeclass.EventUserDataReplaced, 2)
}
