package disruption_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/disruption"
	"github.com/stowage-dev/stowage/controller/state/statetest"
)

// TestOnAPIServer runs the controller's loop on a real API server: after
// consolidateAfter, the empty node's claim is deleted and the busy one's
// stays.
func TestOnAPIServer(t *testing.T) {
	env := statetest.Start(t)
	np := statetest.NodePool("disruption", "default")
	np.Spec.Disruption.ConsolidateAfter = ptr.To(v1alpha1.MustParseDuration("5m"))
	env.Create(t, np)
	empty, busy := managedNode(t, env, np, "disruption-empty"), managedNode(t, env, np, "disruption-busy")
	web := statetest.Pod(env.Namespace, "web", "100m", "128Mi")
	web.Spec.NodeName = busy.Name
	env.Create(t, web)
	statetest.Eventually(t, 30*time.Second, func() error { return seen(env, empty.Name, busy.Name) })

	rec := &recorder{}
	ctrl := disruption.New(env.Clock, env.Cluster, disruption.ClientWriter{Client: env.Client}, disruption.Options{Recorder: rec})
	run(t, ctrl)
	round := func(step time.Duration) {
		t.Helper()
		waitForTimer(t, env)
		env.Clock.Step(step)
		waitForTimer(t, env) // the next timer is set once the round is over
	}

	round(disruption.DefaultInterval) // both nodes seen; the empty one's wait starts
	round(4 * time.Minute)
	if err := exists(env, empty); err != nil {
		t.Fatalf("before consolidateAfter: %v", err)
	}
	round(time.Minute)
	statetest.Eventually(t, 10*time.Second, func() error { return gone(env, empty) })
	round(disruption.DefaultInterval)
	if err := exists(env, busy); err != nil {
		t.Fatalf("the busy node's claim: %v", err)
	}
	want := []string{"NodeClaim/disruption-empty Disrupting", "Node/disruption-empty Disrupting"}
	if got := rec.take(); !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}

// managedNode creates a Ready claim of np and its Ready Node, both named name.
func managedNode(t *testing.T, env *statetest.Env, np *v1alpha1.NodePool, name string) *v1alpha1.NodeClaim {
	t.Helper()
	providerID := "aws:///us-east-1a/i-" + name
	claim := &v1alpha1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1alpha1.LabelNodePool: np.Name}},
		Spec:       v1alpha1.NodeClaimSpec{NodeClassRef: np.Spec.Template.Spec.NodeClassRef},
	}
	claim.Status.ProviderID, claim.Status.NodeName = providerID, name
	claim.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue,
		Reason: v1alpha1.ConditionReady, LastTransitionTime: metav1.NewTime(env.Clock.Now())}}
	node := statetest.Node(name, providerID, "4", "16Gi")
	node.Labels[v1alpha1.LabelNodePool] = np.Name
	env.Create(t, claim, node)
	return claim
}

// seen checks that the cluster state has both nodes as candidates, the busy
// one with its pod.
func seen(env *statetest.Env, empty, busy string) error {
	snap := env.Cluster.Snapshot(nil, nil)
	pods := map[string]int{}
	for _, c := range disruption.NewCandidates(snap.Nodes, disruption.DefaultedPools(snap.NodePools)) {
		pods[c.Name()] = len(c.ReschedulablePods)
	}
	if n, ok := pods[empty]; !ok || n != 0 {
		return fmt.Errorf("candidates and their pods %v: want %s with none", pods, empty)
	}
	if pods[busy] != 1 {
		return fmt.Errorf("candidates and their pods %v: want %s with one", pods, busy)
	}
	return nil
}

func run(t *testing.T, ctrl *disruption.Controller) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ctrl.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the controller's loop: %v", err)
		}
	})
}

func waitForTimer(t *testing.T, env *statetest.Env) {
	t.Helper()
	statetest.Eventually(t, 10*time.Second, func() error {
		if !env.Clock.HasWaiters() {
			return errors.New("the controller is not waiting on the clock")
		}
		return nil
	})
}

func exists(env *statetest.Env, claim *v1alpha1.NodeClaim) error {
	got := &v1alpha1.NodeClaim{}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(claim), got); err != nil {
		return err
	}
	if got.DeletionTimestamp != nil {
		return fmt.Errorf("nodeclaim %s is being deleted", claim.Name)
	}
	return nil
}

func gone(env *statetest.Env, claim *v1alpha1.NodeClaim) error {
	err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(claim), &v1alpha1.NodeClaim{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("nodeclaim %s still exists", claim.Name)
}
