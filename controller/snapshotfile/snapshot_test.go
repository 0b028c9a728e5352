package snapshotfile_test

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/snapshotfile"
)

const gib = int64(1) << 30

// cluster has two NodeClasses (one with subnets in two zones, a 200Gi root volume
// and maxPods 110; one with no status), a pool on each, nodes, claims and pods.
var cluster = docs(
	`apiVersion: stowage.dev/v1alpha1
kind: NodeClass
metadata: {name: gpu}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: StowageNodeRole
  subnetSelectorTerms: [{tags: {stowage.dev/discovery: prod}}]
  securityGroupSelectorTerms: [{tags: {stowage.dev/discovery: prod}}]
  kubelet: {maxPods: 110}
  blockDeviceMappings:
    - {deviceName: /dev/xvda, rootVolume: true, ebs: {volumeSize: 200Gi, volumeType: gp3}}
status:
  subnets:
    - {id: subnet-b, zone: us-east-1b}
    - {id: subnet-a, zone: us-east-1a}
    - {id: subnet-a2, zone: us-east-1a}
`,
	nodeClassWeb,
	nodePoolWeb,
	`apiVersion: stowage.dev/v1alpha1
kind: NodePool
metadata: {name: gpu}
spec:
  weight: 10
  template:
    spec:
      nodeClassRef: {name: gpu}
`,
	`apiVersion: v1
kind: Node
metadata: {name: node-a}
`,
	`apiVersion: v1
kind: Node
metadata: {name: node-old, deletionTimestamp: "2026-01-01T00:00:00Z"}
`,
	`apiVersion: stowage.dev/v1alpha1
kind: NodeClaim
metadata: {name: web-registered}
spec: {nodeClassRef: {name: web}}
status: {nodeName: node-a}
`,
	`apiVersion: stowage.dev/v1alpha1
kind: NodeClaim
metadata: {name: web-launching}
spec: {nodeClassRef: {name: web}}
`,
	pod("on-node", "  nodeName: node-a\n"),
	pod("on-claim", "  nodeName: web-launching\n"),
	pod("pending", ""),
	pod("done", "status: {phase: Succeeded}\n"),
	pod("failed", "status: {phase: Failed}\n"),
	strings.Replace(pod("deleting", ""), "namespace: web", "namespace: web\n  deletionTimestamp: \"2026-01-01T00:00:00Z\"", 1),
)

func infos(t *testing.T, names ...string) []catalogue.Info {
	t.Helper()
	var out []catalogue.Info
	for _, info := range catalogue.Builtin() {
		if slices.Contains(names, info.Name) {
			out = append(out, info)
		}
	}
	if len(out) != len(names) {
		t.Fatalf("found %d of %v in the catalogue", len(out), names)
	}
	return out
}

func find(types []*cloudprovider.InstanceType, name string) *cloudprovider.InstanceType {
	for _, it := range types {
		if it.Name == name {
			return it
		}
	}
	return nil
}

func TestSnapshotBuildsPoolsClassesAndInstanceTypes(t *testing.T) {
	objs := read(t, cluster)
	s := objs.Snapshot(snapshotfile.Options{Infos: infos(t, "m6i.large", "g5.12xlarge"), Defaults: catalogue.DefaultOptions()})
	if len(s.NodePools) != 2 || s.NodePools[0].Name != "web" || s.NodePools[1].Name != "gpu" {
		t.Fatalf("nodepools %v, want web and gpu in file order", s.NodePools)
	}
	if len(s.NodeClasses) != 2 || s.NodeClasses["gpu"] == nil || s.NodeClasses["web"] == nil {
		t.Errorf("nodeclasses %v, want gpu and web by name", s.NodeClasses)
	}
	// Read defaults the objects it validates.
	if m := s.NodeClasses["web"].Spec.MetadataOptions; m == nil || m.HTTPTokens == nil || *m.HTTPTokens != "required" {
		t.Errorf("web NodeClass metadata options %+v, want IMDSv2 required by default", m)
	}
	if s.NodePools[0].Spec.Template.Spec.NodeClassRef.Group != "stowage.dev" {
		t.Errorf("web NodePool nodeClassRef %+v, want the group defaulted", s.NodePools[0].Spec.Template.Spec.NodeClassRef)
	}
	for _, tc := range []struct {
		pool      string
		zones     []string
		pods      int64
		rootGiB   int64
		offerings int
	}{
		// web: no subnets in the status, so the default three zones; ENI pods; 20 GiB.
		{"web", []string{"us-east-1a", "us-east-1b", "us-east-1c"}, 29, 20, 6},
		// gpu: the zones of its subnets, once each, sorted; kubelet maxPods; its root volume.
		{"gpu", []string{"us-east-1a", "us-east-1b"}, 110, 200, 4},
	} {
		types := s.InstanceTypes[tc.pool]
		if len(types) != 2 {
			t.Errorf("pool %s: %d instance types, want 2", tc.pool, len(types))
			continue
		}
		it := find(types, "m6i.large")
		if it == nil {
			t.Errorf("pool %s: no m6i.large", tc.pool)
			continue
		}
		if got := it.Requirements.Get(corev1.LabelTopologyZone).Values(); !slices.Equal(got, tc.zones) {
			t.Errorf("pool %s: zones %v, want %v", tc.pool, got, tc.zones)
		}
		if len(it.Offerings) != tc.offerings {
			t.Errorf("pool %s: %d offerings, want %d", tc.pool, len(it.Offerings), tc.offerings)
		}
		if it.Capacity.Pods != tc.pods {
			t.Errorf("pool %s: m6i.large takes %d pods, want %d", tc.pool, it.Capacity.Pods, tc.pods)
		}
		if it.Capacity.EphemeralStorage != tc.rootGiB*gib {
			t.Errorf("pool %s: ephemeral storage %d GiB, want %d GiB (docs/guides/capacity.md: the root volume)", tc.pool, it.Capacity.EphemeralStorage/gib, tc.rootGiB)
		}
	}
}

func TestSnapshotSplitsPodsAndJoinsNodesWithClaims(t *testing.T) {
	s := read(t, cluster).Snapshot(snapshotfile.Options{Infos: infos(t, "m6i.large"), Defaults: catalogue.DefaultOptions()})
	var pending []string
	for _, p := range s.Pods {
		pending = append(pending, p.Name)
	}
	if !slices.Equal(pending, []string{"pending"}) {
		t.Errorf("pending pods %v, want only [pending]: bound, finished and deleting pods are not pending", pending)
	}
	type stateNode struct {
		node, claim string
		pods        []string
		deleting    bool
	}
	var got []stateNode
	for _, sn := range s.Nodes {
		g := stateNode{deleting: sn.MarkedForDeletion}
		if sn.Node != nil {
			g.node = sn.Node.Name
		}
		if sn.NodeClaim != nil {
			g.claim = sn.NodeClaim.Name
		}
		for _, p := range sn.Pods {
			g.pods = append(g.pods, p.Name)
		}
		got = append(got, g)
	}
	want := []stateNode{
		{node: "node-a", claim: "web-registered", pods: []string{"on-node"}},
		{node: "node-old", deleting: true},
		{claim: "web-launching", pods: []string{"on-claim"}},
	}
	if len(got) != len(want) {
		t.Fatalf("state nodes %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].node != want[i].node || got[i].claim != want[i].claim || !slices.Equal(got[i].pods, want[i].pods) || got[i].deleting != want[i].deleting {
			t.Errorf("state node %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestSnapshotMarksUnavailableOfferings(t *testing.T) {
	objs := read(t, cluster)
	for _, tc := range []struct {
		name        string
		unavailable []snapshotfile.Offering
		// type/zone/capacity type of every offering that must be unavailable in pool web
		want []string
	}{
		{"none", nil, nil},
		{"a type in a zone, every capacity type", []snapshotfile.Offering{{InstanceType: "g5.12xlarge", Zone: "us-east-1a"}},
			[]string{"g5.12xlarge/us-east-1a/on-demand", "g5.12xlarge/us-east-1a/spot"}},
		{"one capacity type", []snapshotfile.Offering{{InstanceType: "m6i.large", Zone: "us-east-1b", CapacityType: "spot"}},
			[]string{"m6i.large/us-east-1b/spot"}},
		{"several", []snapshotfile.Offering{{InstanceType: "m6i.large", Zone: "us-east-1c", CapacityType: "on-demand"}, {InstanceType: "g5.12xlarge", Zone: "us-east-1b"}},
			[]string{"g5.12xlarge/us-east-1b/on-demand", "g5.12xlarge/us-east-1b/spot", "m6i.large/us-east-1c/on-demand"}},
		{"a zone no pool uses changes nothing", []snapshotfile.Offering{{InstanceType: "m6i.large", Zone: "eu-west-1a"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := objs.Snapshot(snapshotfile.Options{Infos: infos(t, "m6i.large", "g5.12xlarge"), Defaults: catalogue.DefaultOptions(), Unavailable: tc.unavailable})
			if got := unavailable(s, "web"); !slices.Equal(got, tc.want) {
				t.Errorf("unavailable in pool web: %v, want %v", got, tc.want)
			}
			// The gpu pool has no us-east-1c, so only its zones a and b can be marked.
			var wantGPU []string
			for _, w := range tc.want {
				if zoneOf(w) != "us-east-1c" {
					wantGPU = append(wantGPU, w)
				}
			}
			if got := unavailable(s, "gpu"); !slices.Equal(got, wantGPU) {
				t.Errorf("unavailable in pool gpu: %v, want %v", got, wantGPU)
			}
		})
	}
}

func unavailable(s *scheduler.Snapshot, pool string) []string {
	var out []string
	for _, it := range s.InstanceTypes[pool] {
		for _, o := range it.Offerings {
			if !o.Available {
				out = append(out, it.Name+"/"+o.Zone+"/"+o.CapacityType)
			}
		}
	}
	slices.Sort(out)
	return out
}

func zoneOf(offering string) string { return strings.Split(offering, "/")[1] }

// TestPriorityClassesOrderTheSolve: a pod that names a PriorityClass of the
// snapshot and has no spec.priority is solved at the class's value, so a
// solve bounded to one pod places it before a pod of the default priority
// whose name sorts first.
func TestPriorityClassesOrderTheSolve(t *testing.T) {
	critical := "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: critical\nvalue: 1000\n"
	objs := read(t, docs(nodeClassWeb, nodePoolWeb, critical, pod("a-plain", ""),
		strings.Replace(pod("b-critical", ""), "spec:\n", "spec:\n  priorityClassName: critical\n", 1)))
	s := objs.Snapshot(snapshotfile.Options{Infos: infos(t, "m6i.large"), Defaults: catalogue.DefaultOptions()})
	r := scheduler.Solve(s, scheduler.Options{Bound: scheduler.PodBudget(1)})
	if r.PodCount() != 1 || len(r.NewNodeClaims) != 1 || r.NewNodeClaims[0].Pods[0].Name != "b-critical" {
		t.Fatalf("placed %d pods (%d claims), want b-critical alone", r.PodCount(), len(r.NewNodeClaims))
	}
	if len(r.Waiting) != 1 || r.Waiting[0].Pod.Name != "a-plain" {
		t.Errorf("waiting %v, want a-plain", r.Waiting)
	}
}
