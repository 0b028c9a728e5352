package capacitybuffer_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stowage-dev/stowage/controller/apis/autoscaling/crd"
	autoscalingv1beta1 "github.com/stowage-dev/stowage/controller/apis/autoscaling/v1beta1"
	"github.com/stowage-dev/stowage/controller/capacitybuffer"
	"github.com/stowage-dev/stowage/controller/operator"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/state"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// TestBuffersOnAnAPIServer runs the controller against a real API server
// serving Cluster Autoscaler's CRD: a buffer written as v1alpha1 (the served,
// deprecated version) is read through the v1beta1 types; its room is booked
// in the cluster state and its status, which the API server validates
// against the CRD, reads as Cluster Autoscaler writes it; the provisioner's
// word sets Provisioning; deleting it forgets its room.
func TestBuffersOnAnAPIServer(t *testing.T) {
	cp := testenv.Start(t, testenv.Options{})
	if _, err := envtest.InstallCRDs(cp.Config, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{crd.MustCapacityBuffer()}}); err != nil {
		t.Fatal(err)
	}
	scheme, err := operator.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	kube, err := client.New(cp.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	must(t, kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	must(t, kube.Create(ctx, &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: "vllm", Namespace: ns}, Template: chunk("16")}))
	alpha := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "autoscaling.x-k8s.io/v1alpha1", "kind": "CapacityBuffer",
		"metadata": map[string]any{"name": "vllm", "namespace": ns},
		"spec":     map[string]any{"podTemplateRef": map[string]any{"name": "vllm"}, "replicas": int64(3)}}}
	must(t, kube.Create(ctx, alpha))

	cluster := state.NewCluster(clocktesting.NewFakeClock(time.Now()))
	triggered := 0
	c := capacitybuffer.New(clocktesting.NewFakeClock(time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)), kube, cluster,
		capacitybuffer.Options{Trigger: func() { triggered++ }})
	reconcileNamespace(t, c)
	if b := cluster.Bookings(); len(b) != 1 || len(b[0].Pods) != 3 || triggered != 1 {
		t.Fatalf("bookings %v after %d triggers, want three virtual pods and one trigger", b, triggered)
	}
	cb := &autoscalingv1beta1.CapacityBuffer{}
	must(t, kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: "vllm"}, cb))
	if cb.Status.Replicas == nil || *cb.Status.Replicas != 3 || cb.Status.PodTemplateRef == nil || cb.Status.PodTemplateGeneration == nil ||
		!apimeta.IsStatusConditionTrue(cb.Status.Conditions, autoscalingv1beta1.ConditionReadyForProvisioning) {
		t.Fatalf("status %+v", cb.Status)
	}

	c.Observe([]scheduler.BookingResult{{Owner: capacitybuffer.OwnerOf(cb), New: 3}})
	reconcileNamespace(t, c)
	must(t, kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: "vllm"}, cb))
	if cond := apimeta.FindStatusCondition(cb.Status.Conditions, autoscalingv1beta1.ConditionProvisioning); cond == nil ||
		cond.Status != metav1.ConditionTrue || cond.Reason != capacitybuffer.ReasonScalingUp {
		t.Fatalf("Provisioning %+v after the provisioner launched for the three chunks", cond)
	}
	if triggered != 1 {
		t.Fatalf("%d triggers: a status write alone opened a batch", triggered)
	}

	must(t, kube.Delete(ctx, cb))
	reconcileNamespace(t, c)
	if b := cluster.Bookings(); len(b) != 0 || triggered != 2 {
		t.Fatalf("bookings %v after the buffer's deletion (%d triggers), want none", b, triggered)
	}
}

// TestRegisteringWithoutTheCRD: on a cluster that serves no CapacityBuffers
// the controller registers nothing, so the manager starts and syncs.
func TestRegisteringWithoutTheCRD(t *testing.T) {
	cp := testenv.Start(t, testenv.Options{})
	scheme, err := operator.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := manager.New(cp.Config, manager.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	c := capacitybuffer.New(clocktesting.NewFakeClock(time.Now()), mgr.GetClient(), state.NewCluster(clocktesting.NewFakeClock(time.Now())), capacitybuffer.Options{})
	if err := c.Register(mgr); err != nil {
		t.Fatalf("registering without the CRD: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() { _ = mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("the manager's caches never synced")
	}
}

func reconcileNamespace(t *testing.T, c *capacitybuffer.Controller) {
	t.Helper()
	if _, err := c.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns}}); err != nil {
		t.Fatalf("reconciling: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
