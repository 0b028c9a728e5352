package manifest_test

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/stowage-dev/stowage/controller/manifest"
)

const stream = `# a leading comment-only document
---
apiVersion: v1
kind: Pod
metadata:
  name: a
spec:
  containers:
    - name: c
      resources:
        requests: {cpu: 100m}
--- # a separator may carry a comment
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Node
    metadata: {name: n1}
  - apiVersion: v1
    kind: Node
    metadata:
      name: n2
      labels: {example.com/team: web}
`

func TestReadSplitsDocumentsAndListsKeepingLines(t *testing.T) {
	objs, err := manifest.Read(strings.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		id            string
		doc, item, ln int
		path          string
		pathLine      int
	}
	wants := []want{
		{"Pod a", 2, -1, 3, "spec.containers[0].resources.requests[cpu]", 11},
		{"Node n1", 3, 0, 16, "metadata.name", 18},
		{"Node n2", 3, 1, 19, "metadata.labels[example.com/team]", 23},
	}
	if len(objs) != len(wants) {
		t.Fatalf("read %d objects, want %d", len(objs), len(wants))
	}
	for i, w := range wants {
		o := objs[i]
		if o.ID() != w.id || o.Document != w.doc || o.Item != w.item || o.Line() != w.ln {
			t.Errorf("object %d: %s document %d item %d line %d, want %s %d %d %d", i, o.ID(), o.Document, o.Item, o.Line(), w.id, w.doc, w.item, w.ln)
		}
		if got := o.LineOf(w.path); got != w.pathLine {
			t.Errorf("%s: %s on line %d, want %d", w.id, w.path, got, w.pathLine)
		}
	}
	// A field that is not written is placed on its nearest written parent.
	if got := objs[0].LineOf("spec.containers[0].resources.limits[cpu]"); got != 10 {
		t.Errorf("missing field placed on line %d, want 10 (resources)", got)
	}
}

func TestDecodeReportsEveryFieldProblemOnItsLine(t *testing.T) {
	objs, err := manifest.Read(strings.NewReader(`apiVersion: v1
kind: Pod
metadata: {name: a, namespace: web}
spec:
  nodeName: node-1
  nodeName: node-2
  containers:
    - name: c
      imagePullPolicyy: Always
`))
	if err != nil {
		t.Fatal(err)
	}
	var pod corev1.Pod
	err = objs[0].Decode(&pod)
	for _, w := range []string{"line 6: Pod web/a: spec.nodeName: duplicate field", `line 9: Pod web/a: spec.containers[0].imagePullPolicyy: unknown field "imagePullPolicyy"`} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Decode error %v does not say %q", err, w)
		}
	}
	unknown, err := objs[0].DecodeLenient(&pod)
	if err != nil || len(unknown) != 2 {
		t.Errorf("DecodeLenient: %d unknown fields, error %v; want 2 and none", len(unknown), err)
	}
	if pod.Spec.Containers[0].Name != "c" {
		t.Errorf("DecodeLenient did not decode the known fields: %+v", pod.Spec)
	}
}

func TestInFileNamesTheFileOnEveryError(t *testing.T) {
	objs, err := manifest.Read(strings.NewReader("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	errs := objs[0].FieldErrors(field.ErrorList{
		field.Required(field.NewPath("spec", "containers"), "add one"),
		field.Invalid(field.NewPath("metadata", "name"), "a", "too short"),
	})
	joined := manifest.InFile("snap.yaml", errors.Join(errs...))
	want := "snap.yaml:4: Pod a: spec.containers: Required value: add one\nsnap.yaml:3: Pod a: metadata.name: Invalid value: \"a\": too short"
	if joined.Error() != want {
		t.Errorf("got\n%s\nwant\n%s", joined, want)
	}
}

func TestValidatePodSpecRefusesNegativeAndInvertedResources(t *testing.T) {
	objs, err := manifest.Read(strings.NewReader(`apiVersion: v1
kind: Pod
metadata: {name: a}
spec:
  overhead: {memory: -1Mi}
  initContainers: [{name: i, resources: {requests: {cpu: "2"}, limits: {cpu: "1"}}}]
  containers: [{name: c, resources: {requests: {cpu: "-4"}}}]
`))
	if err != nil {
		t.Fatal(err)
	}
	var pod corev1.Pod
	if err := objs[0].Decode(&pod); err != nil {
		t.Fatal(err)
	}
	errs := manifest.ValidatePodSpec(field.NewPath("spec"), &pod.Spec)
	got := make([]string, 0, len(errs))
	for _, e := range errs {
		got = append(got, e.Field)
	}
	want := []string{"spec.initContainers[0].resources.requests[cpu]", "spec.containers[0].resources.requests[cpu]", "spec.overhead[memory]"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("errors on %v, want %v", got, want)
	}
}
