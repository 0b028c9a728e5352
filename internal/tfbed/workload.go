package tfbed

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Workload is a Deployment of identical pods, in a namespace of its own.
type Workload struct {
	Namespace, Name string
	Replicas        int32
	Requests        corev1.ResourceList
	// Limits must hold extended resources (nvidia.com/gpu) as Requests do.
	Limits       corev1.ResourceList
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
}

// Run creates the workload's namespace and Deployment.
func (e *Env) Run(ctx context.Context, w Workload) error {
	labels := map[string]string{"app": w.Name}
	return e.Bed.Create(ctx,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.Namespace}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name}, Spec: appsv1.DeploymentSpec{
			Replicas: &w.Replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				NodeSelector: w.NodeSelector, Tolerations: w.Tolerations,
				Containers: []corev1.Container{{Name: "app", Image: w.Name, Resources: corev1.ResourceRequirements{Requests: w.Requests, Limits: w.Limits}}}}}}})
}

// Nodes returns the nodes the workload's pods run on, once all its replicas
// run; an error says how many do.
func (e *Env) Nodes(ctx context.Context, w Workload) ([]corev1.Node, error) {
	var pods corev1.PodList
	if err := e.Bed.Admin.List(ctx, &pods, client.InNamespace(w.Namespace), client.MatchingLabels{"app": w.Name}); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var nodes []corev1.Node
	running := 0
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
			continue
		}
		running++
		if seen[p.Spec.NodeName] {
			continue
		}
		seen[p.Spec.NodeName] = true
		var n corev1.Node
		if err := e.Bed.Admin.Get(ctx, client.ObjectKey{Name: p.Spec.NodeName}, &n); err != nil {
			return nil, err
		}
		nodes = append(nodes, n)
	}
	if running != int(w.Replicas) {
		return nil, fmt.Errorf("%d of %d %s pods running", running, w.Replicas, w.Name)
	}
	return nodes, nil
}

// Delete deletes the workload's namespace and waits until it is gone.
func (e *Env) Delete(ctx context.Context, w Workload) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.Namespace}}
	if err := e.Bed.Admin.Delete(ctx, ns); client.IgnoreNotFound(err) != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		err := e.Bed.Admin.Get(ctx, client.ObjectKeyFromObject(ns), ns)
		return client.IgnoreNotFound(err) == nil && err != nil, client.IgnoreNotFound(err)
	})
}

// Eventually polls check until it passes, failing t with its last error
// after within.
func Eventually(t testing.TB, within time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %v", within, err)
		}
		time.Sleep(250 * time.Millisecond) //nolint:forbidigo // polling a real system with a deadline
	}
}

// ExpectClean fails t for everything a destroy left: in the emulator
// (Leftovers), and in the cluster, any object that was not there before
// (objects that garbage collection removes after their owner are waited for).
func (e *Env) ExpectClean(t testing.TB, before Snapshot) {
	t.Helper()
	ctx := context.Background()
	var left []string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		aws, err := e.Leftovers(ctx)
		if err != nil {
			return false, err
		}
		now, err := e.Objects(ctx)
		if err != nil {
			return false, err
		}
		left = append(aws, before.Added(now)...)
		return len(left) == 0, nil
	})
	for _, l := range left {
		t.Errorf("left after destroy: %s", l)
	}
	if err != nil && len(left) == 0 {
		t.Error(err)
	}
}

// DestroyOnFailure has t's cleanup run destroy (terraform's arguments) in
// dir when t has failed, so that the package's next test finds the bed as
// bare as it expects.
func (e *Env) DestroyOnFailure(t testing.TB, dir string, destroy []string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		if out, err := e.CLI.Run(dir, destroy...); err != nil {
			t.Logf("destroying after the failure: %v\n%s", err, out)
		}
	})
}
