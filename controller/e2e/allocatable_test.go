package e2e_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/nodeclaim/lifecycle"
	"github.com/stowage-dev/stowage/internal/testbed"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// tunedKubelet changes allocatable every way a NodeClass can: pods,
// kube- and system-reserved, and a hard eviction threshold.
func tunedKubelet() *v1alpha1.KubeletConfiguration {
	return &v1alpha1.KubeletConfiguration{MaxPods: ptr.To[int32](20), KubeReserved: map[string]string{"cpu": "300m"},
		SystemReserved: map[string]string{"memory": "300Mi"}, EvictionHard: map[string]string{"memory.available": "500Mi"}}
}

// TestNodesRegisterThePredictedAllocatable: an AL2023 NodeClass whose
// kubelet block changes allocatable gets nodes, read by the bed's kubelet
// from their user data by nodeadm's rules, with the allocatable predicted at
// launch (the bed fails a test on any mismatch); a Custom-family class with
// the same block, whose user data (the user's own NodeConfig) does not
// carry it, gets nodes whose pod count is not the predicted one, which each
// claim's AllocatableMismatch event and the counter report.
func TestNodesRegisterThePredictedAllocatable(t *testing.T) {
	b := startBed(t, testbed.Options{})
	b.mismatchesExpected = true // the Custom class's; the tuned class's are counted apart below
	tuned := nodeClass()
	tuned.Name, tuned.Spec.Kubelet = "tuned", tunedKubelet()
	custom := nodeClass()
	custom.Name, custom.Spec.Kubelet, custom.Spec.AMIFamily = "custom", tunedKubelet(), ptr.To(v1alpha1.AMIFamilyCustom)
	custom.Spec.UserData = ptr.To(b.nodeConfig())
	b.create(tuned, custom, classPool("tuned"), classPool("custom"), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "alloc"}})
	r := b.startReplica("alloc", replicaOptions{releaseOnCancel: true})
	b.waitElected(r, settle)

	tunedBefore, customBefore := mismatches("tuned"), mismatches("custom")
	for _, pool := range []string{"tuned", "custom"} {
		d := deployment("alloc", pool, 2, "500m")
		d.Spec.Template.Spec.NodeSelector = map[string]string{v1alpha1.LabelNodePool: pool}
		b.create(d)
		b.eventually(settle, b.runningIn("alloc", pool, 2, pool))
	}
	b.eventually(settle, func() error { return b.claimsReady() })
	claims, err := b.claims()
	if err != nil {
		t.Fatal(err)
	}
	custom0 := ""
	for _, c := range claims {
		var node corev1.Node
		if err := b.Admin.Get(context.Background(), client.ObjectKey{Name: c.Status.NodeName}, &node); err != nil {
			t.Fatal(err)
		}
		pods, want := node.Status.Allocatable[corev1.ResourcePods], int64(20)
		if c.Labels[v1alpha1.LabelNodePool] == "custom" {
			custom0, want = c.Name, int64(29) // m6i.large's ENI limit: the user's NodeConfig sets no maxPods
		}
		if pods.Value() != want {
			t.Errorf("node %s of claim %s has %s pods, want %d", node.Name, c.Name, pods.String(), want)
		}
	}
	b.eventually(settle, func() error {
		if n := mismatches("custom") - customBefore; n < 1 {
			return fmt.Errorf("%v mismatches counted for the custom pool, want its nodes' pods", n)
		}
		return b.mismatchEvent(custom0)
	})
	if n := mismatches("tuned") - tunedBefore; n != 0 {
		t.Errorf("%v mismatches counted for the tuned pool, want none", n)
	}
}

// nodeConfig is a NodeConfig that joins the bed's cluster and sets nothing
// else, as a node launched outside Stowage's NodeClasses carries.
func (b *bed) nodeConfig() string {
	return fmt.Sprintf("apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    name: %s\n"+
		"    apiServerEndpoint: %s\n    certificateAuthority: %s\n    cidr: %s\n", b.Cluster, b.ControlPlane.APIServerURL,
		base64.StdEncoding.EncodeToString(b.ControlPlane.Config.CAData), testenv.ServiceClusterIPRange)
}

// classPool is an on-demand m6i.large pool of the NodeClass of its name.
func classPool(name string) *v1alpha1.NodePool {
	np := onDemandPool(name, 0, "m6i.large")
	np.Spec.Template.Spec.NodeClassRef.Name = name
	return np
}

// mismatches is the pool's mismatches counted so far, of every resource.
func mismatches(pool string) float64 {
	var n float64
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods, corev1.ResourceEphemeralStorage} {
		n += testutil.ToFloat64(lifecycle.AllocatableMismatch.WithLabelValues(string(r), pool))
	}
	return n
}

// mismatchEvent checks the claim has its AllocatableMismatch event, naming pods.
func (b *bed) mismatchEvent(claim string) error {
	var list eventsv1.EventList
	if err := b.Admin.List(context.Background(), &list); err != nil {
		return err
	}
	for _, e := range list.Items {
		if e.Reason == "AllocatableMismatch" && e.Regarding.Name == claim && strings.Contains(e.Note, "pods predicted 20, registered 29") {
			return nil
		}
	}
	return fmt.Errorf("no AllocatableMismatch event naming pods on claim %s", claim)
}
