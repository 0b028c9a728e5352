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
// the line in the file, the object (kind and name) and the field.
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
		{"unknown kind", docs(nodeClassWeb, "apiVersion: v1\nkind: Service\nmetadata: {name: web}\n"),
			[]string{"line 12: Service web: kind:", `kind "Service" is not part of a snapshot`, "use CapacityBuffer, DaemonSet, Deployment, Job, Node, NodeClaim, NodeClass, NodePool, PersistentVolume, PersistentVolumeClaim, Pod, PodTemplate, PriorityClass, ReplicaSet, ResourceQuota, StatefulSet, StorageClass"}},
		{"a buffer's template with a negative request", docs("apiVersion: v1\nkind: PodTemplate\nmetadata: {name: t}\ntemplate:\n  spec:\n    containers: [{name: c, image: i, resources: {requests: {cpu: \"-1\"}}}]\n"),
			[]string{"line 6: PodTemplate default/t: template.spec.containers[0].resources.requests[cpu]:", "must be greater than or equal to 0"}},
		{"no kind", "apiVersion: v1\nmetadata: {name: x}\n", []string{"line 1: object x", `kind ""`}},
		{"unknown field in a pod", docs(nodeClassWeb, nodePoolWeb, pod("api-0", "  restartPolicyy: Always\n")),
			[]string{"line 29: Pod web/api-0: spec.restartPolicyy:", `unknown field "restartPolicyy"`}},
		{"unknown field deep in a pod", pod("api-0", "  securityContext: {runAsUser: 1, runAsUsr: 2}\n"),
			[]string{"line 8: Pod web/api-0: spec.securityContext.runAsUsr:", `unknown field "runAsUsr"`}},
		{"unknown field in a nodepool", strings.Replace(nodePoolWeb, "requirements:", "requirement:", 1),
			[]string{"line 9: NodePool web: spec.template.spec.requirement:", `unknown field "requirement"`}},
		{"unknown top-level field", nodeClassWeb + "extra: 1\n", []string{"line 10: NodeClass web: extra:", `unknown field "extra"`}},
		{"unknown field in a list item", listOf(nodeClassWeb, pod("api-0", "  bogus: 1\n")),
			[]string{"line 20: Pod web/api-0: spec.bogus:", `unknown field "bogus"`}},
		{"duplicate field", pod("api-0", "  nodeName: a\n  nodeName: b\n"), []string{"line 9: Pod web/api-0: spec.nodeName: duplicate field"}},
		{"wrong type", strings.Replace(nodePoolWeb, "spec:\n  template:", "spec:\n  weight: high\n  template:", 1),
			[]string{"line 6: NodePool web: spec.weight: a string where int32 is wanted"}},
		{"wrong type in the second container", strings.Replace(pod("api-0", ""), "containers: [{name: c, image: i, resources: {requests: {cpu: 100m}}}]",
			"containers:\n  - {name: a, image: i, ports: [{containerPort: 80}]}\n  - {name: b, image: i, ports: [{containerPort: http}]}", 1),
			[]string{"line 9: Pod web/api-0: spec.containers[1].ports[0].containerPort: a string where int32 is wanted"}},
		{"malformed YAML", "kind: Pod\nmetadata: [\n", []string{"line 2: YAML syntax:"}},
		{"malformed YAML in a later document", docs(nodeClassWeb, "kind: Pod\nmetadata:\n  name: [\n"), []string{"line 13: YAML syntax:"}},
		{"content after a separator", nodeClassWeb + "--- kind: Pod\n", []string{"line 10: content after the document separator"}},
		{"not an object", "- a\n- b\n", []string{"line 1: not an object"}},
		{"malformed quantity", pod("api-0", "  overhead: {memory: 1GB, cpu: lots}\n"),
			[]string{"line 8: Pod web/api-0: spec.overhead[cpu]: \"lots\" is not a quantity", "line 8: Pod web/api-0: spec.overhead[memory]: \"1GB\" is not a quantity"}},
		{"malformed quantity in a container", strings.Replace(pod("api-0", ""), "cpu: 100m", "cpu: 1.5 cores", 1),
			[]string{"line 7: Pod web/api-0: spec.containers[0].resources.requests[cpu]: \"1.5 cores\" is not a quantity"}},
		{"negative request", strings.Replace(pod("api-0", ""), "containers: [{name: c, image: i, resources: {requests: {cpu: 100m}}}]",
			"containers:\n  - {name: a, image: i, resources: {requests: {cpu: 4500m}}}\n  - name: b\n    image: i\n    resources:\n      requests: {cpu: \"-4\"}", 1),
			[]string{"line 12: Pod web/api-0: spec.containers[1].resources.requests[cpu]: Invalid value: \"-4\": must be greater than or equal to 0"}},
		{"negative limit in a daemonset", `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers:
        - name: c
          image: i
          resources: {limits: {memory: -1Gi}}
`, []string{"line 12: DaemonSet kube-system/agent: spec.template.spec.containers[0].resources.limits[memory]: Invalid value: \"-1Gi\": must be greater than or equal to 0"}},
		{"request above its limit", strings.Replace(pod("api-0", ""), "requests: {cpu: 100m}", "requests: {cpu: \"2\"}, limits: {cpu: \"1\"}", 1),
			[]string{"line 7: Pod web/api-0: spec.containers[0].resources.requests[cpu]: Invalid value: \"2\": must be less than or equal to the cpu limit (1)"}},
		{"Karpenter's pre-v1 API", strings.Replace(nodePoolWeb, "stowage.dev/v1alpha1", "karpenter.sh/v1beta1", 1),
			[]string{"line 1: NodePool web: apiVersion:", "karpenter.sh/v1beta1 is Karpenter's pre-v1 API; Stowage reads v1"}},
		{"a Karpenter kind Stowage does not read", "apiVersion: karpenter.k8s.aws/v1\nkind: NodeClass\nmetadata: {name: x}\n",
			[]string{"line 1: NodeClass x: apiVersion:", "karpenter.k8s.aws/v1 EC2NodeClass", "use stowage.dev/v1alpha1"}},
		{"a refused Karpenter object", "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: win}\nspec:\n  amiSelectorTerms: [{alias: windows2022@latest}]\n",
			[]string{"line 5: EC2NodeClass win: spec.amiSelectorTerms[0].alias: windows2022@latest: Windows images are not supported"}},
		{"a converted Karpenter object named as a Stowage one", docs(nodePoolWeb, strings.Replace(nodePoolWeb, "stowage.dev/v1alpha1", "karpenter.sh/v1", 1)),
			[]string{"line 15: NodePool web: metadata.name: NodePool web is already on line 1 (once converted, karpenter.sh/v1 NodePool is a NodePool web)"}},
		{"wrong apiVersion", strings.Replace(pod("api-0", ""), "apiVersion: v1", "apiVersion: apps/v1", 1),
			[]string{"line 1: Pod web/api-0: apiVersion:", `"apps/v1" is not the apiVersion of Pod: use v1`}},
		{"a YAML 1.1 boolean where a string is wanted", "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n",
			[]string{"line 3: object : metadata.name: a bool where string is wanted"}},
		{"no name", "apiVersion: v1\nkind: Node\nmetadata: {labels: {a: b}}\n", []string{"line 3: Node : metadata.name: Required value"}},
		{"namespace on a cluster-scoped kind", "apiVersion: v1\nkind: Node\nmetadata: {name: node-1, namespace: web}\n",
			[]string{"line 3: Node web/node-1: metadata.namespace: Node is cluster-scoped; remove the namespace"}},
		{"validation: unsupported operator", docs(nodeClassWeb, strings.Replace(nodePoolWeb, "operator: In", "operator: Within", 1)),
			[]string{"line 20: NodePool web: spec.template.spec.requirements[0].operator: Unsupported value: \"Within\""}},
		{"validation: bad alias", docs(strings.Replace(nodeClassWeb, "al2023@latest", "ubuntu@latest", 1), nodePoolWeb),
			[]string{"line 6: NodeClass web: spec.amiSelectorTerms[0].alias:", "al2023 or bottlerocket"}},
		{"validation: metadata options", docs(nodeClassWeb+"  metadataOptions: {httpTokens: sometimes}\n", nodePoolWeb),
			[]string{"line 10: NodeClass web: spec.metadataOptions.httpTokens:", `"required", "optional"`}},
		{"validation: missing nodeclass", docs(nodeClassWeb, strings.Replace(nodePoolWeb, "name: web}", "name: gpu}", 1)),
			[]string{"line 18: NodePool web: spec.template.spec.nodeClassRef.name:", `NodeClass "gpu" is not in the snapshot`}},
		{"validation: pod bound to a missing node", docs(nodeClassWeb, nodePoolWeb, pod("api-0", "  nodeName: node-z\n")),
			[]string{"line 29: Pod web/api-0: spec.nodeName:", `node "node-z" is not in the snapshot`}},
		{"validation in a list item", listOf(nodeClassWeb, strings.Replace(nodePoolWeb, "[m6i]", "[]", 1)),
			[]string{"line 22: NodePool web: spec.template.spec.requirements[0].values:"}},
		{"duplicate nodepool", docs(nodeClassWeb, nodePoolWeb, nodePoolWeb), []string{"line 25: NodePool web: metadata.name: NodePool web is already on line 11"}},
		{"duplicate pod", docs(pod("api-0", ""), pod("api-0", "")), []string{"line 12: Pod web/api-0: metadata.name: Pod web/api-0 is already on line 1"}},
		{"pod without a namespace is in default", docs(strings.Replace(pod("api-0", ""), "namespace: web", "namespace: default", 1),
			strings.Replace(pod("api-0", ""), "  namespace: web\n", "", 1)),
			[]string{"line 12: Pod default/api-0: metadata.name: Pod default/api-0 is already on line 1"}},
		{"empty snapshot", "# nothing here\n---\n\n", []string{"the snapshot holds no objects", "kubectl get"}},
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
	for _, w := range []string{"line 8: NodeClass web: spec.role", "line 21: NodePool web: spec.template.spec.requirements[0].operator", "line 30: Pod web/api-0: spec.nodeName"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
}
