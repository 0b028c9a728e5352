package e2e_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/testbed"
	"github.com/stowage-dev/stowage/internal/testenv"
)

const migration = "migration"

// TestBesideKarpenter runs Stowage in a cluster where Karpenter (its
// NodeClaims and its nodes) and a managed node group already run, as during
// a migration: Stowage launches only for the pods its own pools can serve,
// its nodes carry Karpenter's selector labels but none of its ownership
// markers, and it never disrupts, taints or adopts a node it does not own,
// while it does remove its own empty nodes.
func TestBesideKarpenter(t *testing.T) {
	b := startBed(t, testbed.Options{})
	b.create(nodeClass(), nodePool(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: migration}})
	installKarpenterNodeClaims(t, b)
	karpenterNode := foreignNode("ip-10-9-0-1.ec2.internal", "i-0karpenter0000001", map[string]string{
		"karpenter.sh/nodepool": "legacy", "karpenter.sh/capacity-type": "on-demand", "karpenter.sh/registered": "true",
		"karpenter.sh/initialized": "true", "karpenter.k8s.aws/instance-family": "m5", corev1.LabelInstanceTypeStable: "m5.large"})
	groupNode := foreignNode("ip-10-9-0-2.ec2.internal", "i-0nodegroup000002", map[string]string{"eks.amazonaws.com/nodegroup": "system"})
	b.create(karpenterNode, groupNode)
	claim := karpenterNodeClaim(karpenterNode)
	if err := b.Admin.Create(context.Background(), claim); err != nil {
		t.Fatalf("creating Karpenter's NodeClaim: %v", err)
	}
	a := b.startReplica("replica-a", replicaOptions{releaseOnCancel: true})
	b.waitElected(a, 30*time.Second)

	// Pods pinned to Karpenter's pool: one fits its node, the other waits,
	// and Stowage, which decides on it, launches nothing.
	legacy := deployment(migration, "legacy", 2, "1500m")
	legacy.Spec.Template.Spec.NodeSelector = map[string]string{"karpenter.sh/nodepool": "legacy"}
	b.create(legacy)
	b.eventually(settle, func() error { return b.stowageFailedScheduling(migration, "legacy") })
	if claims, _ := b.claims(); len(claims) != 0 {
		t.Fatalf("Stowage made %d nodeclaims for pods pinned to Karpenter's pool: %s", len(claims), describe(claims))
	}

	// Pods selecting Karpenter's capacity-type key run on Stowage's nodes.
	migrated := deployment(migration, "migrated", 3, "1")
	migrated.Spec.Template.Spec.NodeSelector = map[string]string{"karpenter.sh/capacity-type": "on-demand"}
	b.create(migrated)
	b.eventually(settle, b.running(migration, "migrated", 3))
	checkStowageNodesLabels(t, b)

	// Stowage removes its own nodes once empty, and leaves the others alone:
	// the pool's budget lets one empty node go at a time, each after the
	// command's validation delay.
	b.scale(migration, "migrated", 0)
	b.eventually(2*settle, func() error {
		if claims, err := b.claims(); err != nil || len(claims) > 0 {
			return fmt.Errorf("%d nodeclaims left (%v)", len(claims), err)
		}
		return nil
	})
	checkUntouched(t, b, []*corev1.Node{karpenterNode, groupNode}, claim)
}

// installKarpenterNodeClaims serves karpenter.sh/v1 NodeClaims, with an open
// schema: the bed only needs the objects to exist.
func installKarpenterNodeClaims(t *testing.T, b *bed) {
	t.Helper()
	open := true
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "nodeclaims.karpenter.sh"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "karpenter.sh", Scope: apiextensionsv1.ClusterScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "nodeclaims", Singular: "nodeclaim", Kind: "NodeClaim", ListKind: "NodeClaimList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &open}}}},
		},
	}
	if _, err := envtest.InstallCRDs(b.ControlPlane.Config, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{crd}}); err != nil {
		t.Fatalf("installing Karpenter's NodeClaim CRD: %v", err)
	}
}

// foreignNode is a Ready node Stowage did not launch, run by kwok.
func foreignNode(name, instance string, labels map[string]string) *corev1.Node {
	all := map[string]string{corev1.LabelHostname: name, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
		corev1.LabelTopologyZone: "us-east-1a", corev1.LabelTopologyRegion: testbed.Region}
	maps.Copy(all, labels)
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi"),
		corev1.ResourcePods: resource.MustParse("29")}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: all, Annotations: map[string]string{testenv.KwokNodeAnnotation: testenv.KwokNodeAnnotationValue}},
		Spec:       corev1.NodeSpec{ProviderID: "aws:///us-east-1a/" + instance},
		Status:     corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
}

// karpenterNodeClaim is the NodeClaim Karpenter made for its node.
func karpenterNodeClaim(node *corev1.Node) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
		"metadata": map[string]any{"name": "legacy-x7k2p", "labels": map[string]any{"karpenter.sh/nodepool": "legacy"},
			"finalizers": []any{"karpenter.sh/termination"}},
		"spec": map[string]any{"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
			"requirements": []any{map[string]any{"key": "karpenter.sh/nodepool", "operator": "In", "values": []any{"legacy"}}}},
		"status": map[string]any{"nodeName": node.Name, "providerID": node.Spec.ProviderID},
	}}
	return u
}

// stowageFailedScheduling checks that Stowage decided on every pending pod
// of app and found no pool for it.
func (b *bed) stowageFailedScheduling(ns, app string) error {
	pods, events, err := b.podsAndEvents(ns, app)
	if err != nil {
		return err
	}
	decided := map[string]bool{}
	for _, e := range events {
		if e.Reason == "FailedScheduling" && e.Action == "Provision" && strings.Contains(e.Note, "karpenter.sh/nodepool") {
			decided[e.Regarding.Name] = true
		}
	}
	pending := 0
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			pending++
			if !decided[p.Name] {
				return fmt.Errorf("pod %s: no FailedScheduling event from Stowage naming karpenter.sh/nodepool yet", p.Name)
			}
		}
	}
	if pending != 1 {
		return fmt.Errorf("%d legacy pods pending, want 1 (the other on Karpenter's node)", pending)
	}
	return nil
}

// podsAndEvents lists the pods of app in ns, and the events of ns.
func (b *bed) podsAndEvents(ns, app string) ([]corev1.Pod, []eventsv1.Event, error) {
	pods, err := b.pods(ns, app)
	if err != nil {
		return nil, nil, err
	}
	var list eventsv1.EventList
	err = b.Admin.List(context.Background(), &list, client.InNamespace(ns))
	return pods, list.Items, err
}

// checkStowageNodesLabels checks Stowage's nodes carry Karpenter's selector
// labels and none of its ownership markers.
func checkStowageNodesLabels(t *testing.T, b *bed) {
	t.Helper()
	var nodes corev1.NodeList
	if err := b.Admin.List(context.Background(), &nodes, client.MatchingLabels{v1alpha1.LabelNodePool: poolName}); err != nil || len(nodes.Items) == 0 {
		t.Fatalf("listing Stowage's nodes: %d, %v", len(nodes.Items), err)
	}
	for _, n := range nodes.Items {
		if n.Labels["karpenter.sh/capacity-type"] != n.Labels[v1alpha1.LabelCapacityType] ||
			n.Labels["karpenter.k8s.aws/instance-family"] != n.Labels[v1alpha1.LabelInstanceFamily] || n.Labels["karpenter.k8s.aws/instance-family"] == "" {
			t.Errorf("node %s lacks Karpenter's selector labels: %v", n.Name, n.Labels)
		}
		for _, marker := range []string{v1alpha1.KarpenterLabelNodePool, v1alpha1.KarpenterLabelRegistered, v1alpha1.KarpenterLabelInitialized, v1alpha1.KarpenterLabelNodeClass} {
			if v, ok := n.Labels[marker]; ok {
				t.Errorf("node %s carries Karpenter's ownership marker %s=%s", n.Name, marker, v)
			}
		}
	}
}

// checkUntouched checks the foreign nodes and Karpenter's NodeClaim are as
// they were made: not deleted, tainted, finalized or owned by Stowage.
func checkUntouched(t *testing.T, b *bed, nodes []*corev1.Node, claim *unstructured.Unstructured) {
	t.Helper()
	for _, want := range nodes {
		var n corev1.Node
		if err := b.Admin.Get(context.Background(), client.ObjectKeyFromObject(want), &n); err != nil {
			t.Errorf("node %s: %v", want.Name, err)
			continue
		}
		stowageTaint := slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return strings.HasPrefix(t.Key, v1alpha1.Group+"/") })
		if n.DeletionTimestamp != nil || stowageTaint || len(n.Finalizers) > 0 || len(n.OwnerReferences) > 0 || relabelled(want.Labels, n.Labels) {
			t.Errorf("Stowage changed node %s: deletion %v, taints %v, finalizers %v, owners %v, labels %v (were %v)",
				n.Name, n.DeletionTimestamp, n.Spec.Taints, n.Finalizers, n.OwnerReferences, n.Labels, want.Labels)
		}
	}
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(claim.GroupVersionKind())
	if err := b.Admin.Get(context.Background(), client.ObjectKeyFromObject(claim), got); err != nil || got.GetDeletionTimestamp() != nil ||
		len(got.GetFinalizers()) != 1 {
		t.Errorf("Karpenter's NodeClaim %s: %v, deletion %v, finalizers %v", claim.GetName(), err, got.GetDeletionTimestamp(), got.GetFinalizers())
	}
}

// relabelled reports whether Stowage changed a node's labels: one of the
// labels it was made with differs, or a stowage.dev label appeared (kwok adds
// the beta.kubernetes.io ones).
func relabelled(was, now map[string]string) bool {
	for k, v := range was {
		if now[k] != v {
			return true
		}
	}
	for k := range now {
		if strings.HasPrefix(k, v1alpha1.Group+"/") {
			return true
		}
	}
	return false
}
