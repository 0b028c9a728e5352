package snapshotfile_test

import (
	"strings"
	"testing"

	"github.com/stowage-dev/stowage/controller/snapshotfile"
)

const nodeClassWeb = `apiVersion: stowage.dev/v1alpha1
kind: NodeClass
metadata:
  name: web
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: StowageNodeRole
  subnetSelectorTerms: [{tags: {stowage.dev/discovery: prod}}]
  securityGroupSelectorTerms: [{tags: {stowage.dev/discovery: prod}}]
`

const nodePoolWeb = `apiVersion: stowage.dev/v1alpha1
kind: NodePool
metadata:
  name: web
spec:
  template:
    spec:
      nodeClassRef: {name: web}
      requirements:
        - {key: stowage.dev/instance-family, operator: In, values: [m6i]}
`

func pod(name, extra string) string {
	return `apiVersion: v1
kind: Pod
metadata:
  name: ` + name + `
  namespace: web
spec:
  containers: [{name: c, image: i, resources: {requests: {cpu: 100m}}}]
` + extra
}

func docs(parts ...string) string { return strings.Join(parts, "---\n") }

func read(t *testing.T, text string) *snapshotfile.Objects {
	t.Helper()
	objs, err := snapshotfile.Read(strings.NewReader(text))
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return objs
}

func TestReadMultiDocumentYAML(t *testing.T) {
	text := docs(
		"# a comment-only document is skipped\n# like this\n",
		nodeClassWeb,
		nodePoolWeb,
		"\n", // an empty document is skipped
		`apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: gp3}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
`,
		`apiVersion: apps/v1
kind: DaemonSet
metadata: {name: aws-node, namespace: kube-system}
spec:
  selector: {matchLabels: {app: aws-node}}
  template:
    metadata: {labels: {app: aws-node}}
    spec: {containers: [{name: c, image: i}]}
`,
		`apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: web}
spec: {storageClassName: gp3, volumeName: pv-1}
`,
		`apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-1}
spec: {capacity: {storage: 1Gi}}
`,
		`apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {topology.kubernetes.io/zone: us-east-1a}}
`,
		`apiVersion: stowage.dev/v1alpha1
kind: NodeClaim
metadata: {name: web-abcde}
spec: {nodeClassRef: {name: web}}
status: {nodeName: node-a}
`,
		pod("api-1", "  nodeName: node-a\n"),
		pod("api-0", ""),
	)
	objs := read(t, text)
	counts := map[string]int{
		"Pod": len(objs.Pods), "Node": len(objs.Nodes), "DaemonSet": len(objs.DaemonSets), "PersistentVolumeClaim": len(objs.PersistentVolumeClaims),
		"PersistentVolume": len(objs.PersistentVolumes), "StorageClass": len(objs.StorageClasses), "NodePool": len(objs.NodePools),
		"NodeClass": len(objs.NodeClasses), "NodeClaim": len(objs.NodeClaims),
	}
	for kind, n := range counts {
		want := 1
		if kind == "Pod" {
			want = 2
		}
		if n != want {
			t.Errorf("%d %ss, want %d", n, kind, want)
		}
	}
	if len(objs.Pods) == 2 && (objs.Pods[0].Name != "api-1" || objs.Pods[1].Name != "api-0" || objs.Pods[0].Spec.NodeName != "node-a") {
		t.Errorf("pods %s, %s: want api-1 (on node-a) then api-0, in file order", objs.Pods[0].Name, objs.Pods[1].Name)
	}
	if len(objs.NodePools) == 1 && objs.NodePools[0].Spec.Template.Spec.Requirements[0].Values[0] != "m6i" {
		t.Errorf("nodepool requirements = %+v", objs.NodePools[0].Spec.Template.Spec.Requirements)
	}
}

func TestReadListDocuments(t *testing.T) {
	indent := func(s string) string {
		lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
		out := "  - " + lines[0] + "\n"
		for _, l := range lines[1:] {
			out += "    " + l + "\n"
		}
		return out
	}
	text := docs(
		"apiVersion: v1\nkind: List\nitems:\n"+indent(nodeClassWeb)+indent(nodePoolWeb),
		"apiVersion: v1\nkind: PodList\nitems:\n"+indent(pod("api-0", ""))+indent(pod("api-1", "")),
		"apiVersion: v1\nkind: NodeList\nitems: []\n",
	)
	objs := read(t, text)
	if len(objs.NodeClasses) != 1 || len(objs.NodePools) != 1 || len(objs.Pods) != 2 || len(objs.Nodes) != 0 {
		t.Errorf("read %d nodeclasses, %d nodepools, %d pods, %d nodes; want 1, 1, 2, 0",
			len(objs.NodeClasses), len(objs.NodePools), len(objs.Pods), len(objs.Nodes))
	}
	if len(objs.Pods) == 2 && objs.Pods[1].Name != "api-1" {
		t.Errorf("second pod %s, want api-1", objs.Pods[1].Name)
	}
}

// TestReadRefusesBadInput checks that each error names where the problem is:
// the document, the object (kind and name) and the field.
func TestReadRefusesBadInput(t *testing.T) {
	listOf := func(items ...string) string {
		out := "apiVersion: v1\nkind: List\nitems:\n"
		for _, it := range items {
			lines := strings.Split(strings.TrimSuffix(it, "\n"), "\n")
			out += "  - " + lines[0] + "\n"
			for _, l := range lines[1:] {
				out += "    " + l + "\n"
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		text string
		want []string
	}{
		{"unknown kind", docs(nodeClassWeb, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"),
			[]string{"document 2", `kind "Deployment" is not part of a snapshot`, "use DaemonSet, Node, NodeClaim, NodeClass, NodePool, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass"}},
		{"no kind", "apiVersion: v1\nmetadata: {name: x}\n", []string{"document 1", `kind ""`}},
		{"unknown field in a pod", docs(nodeClassWeb, nodePoolWeb, pod("api-0", "  restartPolicyy: Always\n")),
			[]string{"document 3", "Pod web/api-0", `unknown field "restartPolicyy"`}},
		{"unknown field deep in a pod", pod("api-0", "  securityContext: {runAsUser: 1, runAsUsr: 2}\n"),
			[]string{"document 1", "Pod web/api-0", `unknown field "runAsUsr"`}},
		{"unknown field in a nodepool", strings.Replace(nodePoolWeb, "requirements:", "requirement:", 1),
			[]string{"document 1", "NodePool web", `unknown field "requirement"`}},
		{"unknown top-level field", nodeClassWeb + "extra: 1\n", []string{"document 1", "NodeClass web", `unknown field "extra"`}},
		{"unknown field in a list item", listOf(nodeClassWeb, pod("api-0", "  bogus: 1\n")),
			[]string{"document 1", "items[1]", "Pod web/api-0", `unknown field "bogus"`}},
		{"wrong type", strings.Replace(nodePoolWeb, "spec:\n  template:", "spec:\n  weight: high\n  template:", 1),
			[]string{"document 1", "NodePool web", "weight"}},
		{"malformed YAML", "kind: Pod\nmetadata: [\n", []string{"document 1"}},
		{"validation: unsupported operator", docs(nodeClassWeb, strings.Replace(nodePoolWeb, "operator: In", "operator: Within", 1)),
			[]string{"document 2", "NodePool web", `spec.template.spec.requirements[0].operator: Unsupported value: "Within"`}},
		{"validation: bad alias", docs(strings.Replace(nodeClassWeb, "al2023@latest", "ubuntu@latest", 1), nodePoolWeb),
			[]string{"document 1", "NodeClass web", "spec.amiSelectorTerms[0].alias", "al2023 or bottlerocket"}},
		{"validation: metadata options", docs(nodeClassWeb+"  metadataOptions: {httpTokens: sometimes}\n", nodePoolWeb),
			[]string{"document 1", "NodeClass web", "spec.metadataOptions.httpTokens", `"required", "optional"`}},
		{"validation: missing nodeclass", docs(nodeClassWeb, strings.Replace(nodePoolWeb, "name: web}", "name: gpu}", 1)),
			[]string{"document 2", "NodePool web", "spec.template.spec.nodeClassRef.name", `NodeClass "gpu" is not in the snapshot`}},
		{"validation: pod bound to a missing node", docs(nodeClassWeb, nodePoolWeb, pod("api-0", "  nodeName: node-z\n")),
			[]string{"document 3", "Pod web/api-0", "spec.nodeName", `node "node-z" is not in the snapshot`}},
		{"validation in a list item", listOf(nodeClassWeb, strings.Replace(nodePoolWeb, "[m6i]", "[]", 1)),
			[]string{"document 1", "items[1]", "NodePool web", "spec.template.spec.requirements[0].values"}},
		{"duplicate nodepool", docs(nodeClassWeb, nodePoolWeb, nodePoolWeb), []string{"document 3", "NodePool web", "document 2"}},
		{"duplicate pod", docs(pod("api-0", ""), pod("api-0", "")), []string{"document 2", "Pod web/api-0", "document 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := snapshotfile.Read(strings.NewReader(tc.text))
			if err == nil {
				t.Fatal("Read accepted the input")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestReadReportsEveryValidationError(t *testing.T) {
	text := docs(
		strings.Replace(nodeClassWeb, "role: StowageNodeRole", "instanceProfile: p\n  role: r", 1),
		strings.Replace(nodePoolWeb, "operator: In", "operator: Within", 1),
		pod("api-0", "  nodeName: node-z\n"),
	)
	_, err := snapshotfile.Read(strings.NewReader(text))
	if err == nil {
		t.Fatal("Read accepted the input")
	}
	for _, w := range []string{"NodeClass web: spec.role", "NodePool web: spec.template.spec.requirements[0].operator", "Pod web/api-0: spec.nodeName"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
}
