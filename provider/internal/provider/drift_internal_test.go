package provider

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/provider/internal/kube"
)

func classObject(userData string) map[string]any {
	return nodeClassKind.object(map[string]any{
		"metadata": map[string]any{"name": "drift-class"},
		"spec": map[string]any{
			"role": "r", "userData": userData,
			"amiSelectorTerms":           []any{map[string]any{"alias": "al2023@latest"}},
			"subnetSelectorTerms":        []any{map[string]any{"id": "subnet-1"}},
			"securityGroupSelectorTerms": []any{map[string]any{"id": "sg-1"}},
		},
	})
}

// TestNodeClassDriftCountsTheClaimsLaunchedWithIt counts, for a change to a
// class's user data, the claims that name the class and recorded its hash at
// launch (with the API server's defaults, as the controller hashes it), and
// no claim of another class, of an older hash version, or without a hash.
func TestNodeClassDriftCountsTheClaimsLaunchedWithIt(t *testing.T) {
	ctx := context.Background()
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBE_CONFIG_PATH"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := kube.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(cfg)
	prior := classObject("echo one")
	hash, err := nodeClassKind.hash(prior)
	if err != nil {
		t.Fatal(err)
	}
	claims := map[string][2]string{ // name -> class, annotations (hash|version)
		"drift-a": {"drift-class", hash + "|" + v1alpha1.HashVersion},
		"drift-b": {"drift-class", hash + "|"},
		"drift-c": {"other-class", hash + "|" + v1alpha1.HashVersion},
		"drift-d": {"drift-class", hash + "|v0"},
		"drift-e": {"drift-class", "|"},
	}
	for name, c := range claims {
		h, version, _ := strings.Cut(c[1], "|")
		ann := map[string]any{}
		if h != "" {
			ann[v1alpha1.AnnotationNodeClassHash] = h
		}
		if version != "" {
			ann[v1alpha1.AnnotationHashVersion] = version
		}
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": v1alpha1.SchemeGroupVersion.String(), "kind": "NodeClaim",
			"metadata": map[string]any{"name": name, "annotations": ann}, "spec": map[string]any{"nodeClassRef": map[string]any{"name": c[0]}}}}
		if _, err := dyn.Resource(kube.Resource("nodeclaims")).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = dyn.Resource(kube.Resource("nodeclaims")).Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	}
	if w, err := nodeClassKind.drift(ctx, c, nil, prior, classObject("echo one")); err != nil || w != nil {
		t.Fatalf("an unchanged class drifts: %v, %v", w, err)
	}
	w, err := nodeClassKind.drift(ctx, c, nil, prior, classObject("echo two"))
	if err != nil {
		t.Fatal(err)
	}
	want := "this change drifts the 2 nodes launched with node class drift-class; they will be replaced within their pools' budgets. " +
		"Of them: 2 nodes launched under the old template (what a node fixes at launch: role, user data, disks, kubelet, metadata options, tags)."
	if w == nil || w.detail != want {
		t.Fatalf("warning = %+v, want %q", w, want)
	}
	if w.summary != fmt.Sprintf("This change drifts %d nodes of node class %s", 2, "drift-class") {
		t.Errorf("summary = %q", w.summary)
	}
}
