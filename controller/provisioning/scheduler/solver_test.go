package scheduler_test

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/checker"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

const zoneKey = corev1.LabelTopologyZone

func pods(n int, prefix, cpu, mem string, mutate ...func(*corev1.Pod)) []*corev1.Pod {
	var out []*corev1.Pod
	for i := 0; i < n; i++ {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%03d", prefix, i), Namespace: "default", Labels: map[string]string{"app": prefix}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}}}}}
		for _, m := range mutate {
			m(p)
		}
		out = append(out, p)
	}
	return out
}

func pool(name string, mutate ...func(*v1alpha1.NodePool)) *v1alpha1.NodePool {
	np := &v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.NodePoolSpec{Template: v1alpha1.NodeClaimTemplate{
		Spec: v1alpha1.NodeClaimTemplateSpec{NodeClassRef: &v1alpha1.NodeClassReference{Name: "default"}}}}}
	for _, m := range mutate {
		m(np)
	}
	return np
}

func require(key, op string, values ...string) func(*v1alpha1.NodePool) {
	return func(np *v1alpha1.NodePool) {
		np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, v1alpha1.NodeSelectorRequirementWithMinValues{Key: key, Operator: op, Values: values})
	}
}

func snapshot(ps []*corev1.Pod, pools ...*v1alpha1.NodePool) *scheduler.Snapshot {
	s := &scheduler.Snapshot{Pods: ps, NodePools: pools, InstanceTypes: map[string][]*cloudprovider.InstanceType{}}
	for _, np := range pools {
		s.InstanceTypes[np.Name] = catalogue.InstanceTypes(catalogue.Builtin(), catalogue.DefaultOptions())
	}
	return s
}

// solve runs the solver and the independent checker, failing on any violation.
func solve(t *testing.T, s *scheduler.Snapshot, opts scheduler.Options) *scheduler.Results {
	t.Helper()
	r := scheduler.Solve(s, opts)
	for _, v := range checker.Check(s, r) {
		t.Errorf("checker: %s", v)
	}
	return r
}

func zones(r *scheduler.Results) map[string]int {
	out := map[string]int{}
	for _, nc := range r.NewNodeClaims {
		out[nc.Requirements.Get(zoneKey).Any()] += len(nc.Pods)
	}
	return out
}

func spread(key string, skew int32) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, corev1.TopologySpreadConstraint{MaxSkew: skew, TopologyKey: key,
			WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": p.Labels["app"]}}})
	}
}

func antiAffinity(key string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey: key, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": p.Labels["app"]}}}}}}
	}
}

func TestPlacesEveryPodOnTheCheapestCapacity(t *testing.T) {
	r := solve(t, snapshot(pods(40, "web", "1", "2Gi"), pool("default")), scheduler.Options{})
	if len(r.Unschedulable) != 0 || r.PodCount() != 40 {
		t.Fatalf("placed %d of 40, unschedulable %v", r.PodCount(), r.Unschedulable)
	}
	for _, nc := range r.NewNodeClaims {
		if nc.Offering.CapacityType != v1alpha1.CapacityTypeSpot {
			t.Errorf("%s uses %s; spot is cheaper and allowed", nc.Name, nc.Offering.CapacityType)
		}
		for i := 1; i < len(nc.InstanceTypes); i++ {
			if nc.InstanceTypes[i].CheapestPrice(nc.Requirements) < nc.InstanceTypes[i-1].CheapestPrice(nc.Requirements) {
				t.Errorf("%s: fallback list is not ranked by price at %d", nc.Name, i)
			}
		}
	}
}

func TestZoneSpreadIsEven(t *testing.T) {
	r := solve(t, snapshot(pods(30, "web", "500m", "1Gi", spread(zoneKey, 1)), pool("default")), scheduler.Options{})
	got := zones(r)
	for _, z := range []string{"us-east-1a", "us-east-1b", "us-east-1c"} {
		if got[z] != 10 {
			t.Errorf("zone %s has %d pods, want 10 (all: %v)", z, got[z], got)
		}
	}
}

func TestHostnameSpreadAndAntiAffinityGiveOnePodPerNode(t *testing.T) {
	for name, mutate := range map[string]func(*corev1.Pod){"spread": spread(corev1.LabelHostname, 1), "anti-affinity": antiAffinity(corev1.LabelHostname)} {
		t.Run(name, func(t *testing.T) {
			r := solve(t, snapshot(pods(12, "db", "250m", "256Mi", mutate), pool("default")), scheduler.Options{})
			if len(r.NewNodeClaims) != 12 {
				t.Errorf("got %d nodeclaims, want one per pod (12)", len(r.NewNodeClaims))
			}
		})
	}
}

func TestZoneAntiAffinityLeavesPodsBeyondTheZonesUnschedulable(t *testing.T) {
	r := solve(t, snapshot(pods(4, "leader", "250m", "256Mi", antiAffinity(zoneKey)), pool("default")), scheduler.Options{})
	if len(r.Unschedulable) != 1 || r.PodCount() != 3 {
		t.Fatalf("placed %d, unschedulable %d; want 3 placed (one per zone) and 1 unschedulable", r.PodCount(), len(r.Unschedulable))
	}
	if !strings.Contains(r.Unschedulable[0].Reason, "anti-affinity") {
		t.Errorf("reason %q should name the anti-affinity", r.Unschedulable[0].Reason)
	}
}

func TestPodAffinityCoLocatesInOneZone(t *testing.T) {
	affinity := func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey: zoneKey, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "cache"}}}}}}
	}
	r := solve(t, snapshot(pods(20, "cache", "1", "1Gi", affinity), pool("default")), scheduler.Options{})
	if got := zones(r); len(got) != 1 {
		t.Errorf("pods landed in %d zones (%v), want one", len(got), got)
	}
}

func TestTaintsAndTolerations(t *testing.T) {
	gpu := pool("gpu", func(np *v1alpha1.NodePool) {
		np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
		np.Spec.Template.Spec.StartupTaints = []corev1.Taint{{Key: "nvidia.com/driver", Effect: corev1.TaintEffectNoSchedule}}
	})
	r := solve(t, snapshot(pods(1, "web", "1", "1Gi"), gpu), scheduler.Options{})
	if len(r.Unschedulable) != 1 || !strings.Contains(r.Unschedulable[0].Reason, "nodepool gpu: taint dedicated=gpu:NoSchedule is not tolerated") {
		t.Fatalf("want the taint named as the reason, got %+v", r.Unschedulable)
	}
	tolerate := func(p *corev1.Pod) {
		p.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
	}
	r = solve(t, snapshot(pods(1, "web", "1", "1Gi", tolerate), gpu), scheduler.Options{})
	if len(r.Unschedulable) != 0 {
		t.Errorf("a tolerating pod must schedule (startup taints do not block): %+v", r.Unschedulable)
	}
}

func TestNodeSelectorAndAffinityNarrowTheInstanceTypes(t *testing.T) {
	arm := func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{corev1.LabelArchStable: "arm64"} }
	family := func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{
				{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: v1alpha1.LabelInstanceFamily, Operator: corev1.NodeSelectorOpIn, Values: []string{"nope"}}}},
				{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: v1alpha1.LabelInstanceFamily, Operator: corev1.NodeSelectorOpIn, Values: []string{"m7g"}}}},
			}}}}
	}
	r := solve(t, snapshot(pods(3, "arm", "2", "4Gi", arm, family), pool("default")), scheduler.Options{})
	if len(r.Unschedulable) != 0 {
		t.Fatalf("unschedulable: %+v", r.Unschedulable)
	}
	for _, nc := range r.NewNodeClaims {
		for _, it := range nc.InstanceTypes {
			if !strings.HasPrefix(it.Name, "m7g.") {
				t.Errorf("%s lists %s; the pods require family m7g (second affinity term)", nc.Name, it.Name)
			}
		}
	}
}

func TestWeightedPoolsFallBackWhenSpotIsShort(t *testing.T) {
	spot := pool("spot", require(v1alpha1.LabelCapacityType, "In", "spot"), require(v1alpha1.LabelInstanceFamily, "In", "c6i"), func(np *v1alpha1.NodePool) { np.Spec.Weight = ptr.To(int32(100)) })
	od := pool("on-demand", require(v1alpha1.LabelCapacityType, "In", "on-demand"), require(v1alpha1.LabelInstanceFamily, "In", "c6i"))
	s := snapshot(pods(8, "web", "1", "2Gi"), spot, od)
	r := solve(t, s, scheduler.Options{})
	for _, nc := range r.NewNodeClaims {
		if nc.NodePool != "spot" {
			t.Errorf("%s went to %s while spot had capacity", nc.Name, nc.NodePool)
		}
	}
	for _, it := range s.InstanceTypes["spot"] {
		for i := range it.Offerings {
			if it.Offerings[i].CapacityType == "spot" {
				it.Offerings[i].Available = false
			}
		}
	}
	r = solve(t, s, scheduler.Options{})
	if len(r.Unschedulable) != 0 || len(r.NewNodeClaims) == 0 {
		t.Fatalf("want fallback to on-demand, got %+v", r.Unschedulable)
	}
	for _, nc := range r.NewNodeClaims {
		if nc.NodePool != "on-demand" || nc.Offering.CapacityType != "on-demand" {
			t.Errorf("%s: pool %s capacity %s, want the on-demand fallback", nc.Name, nc.NodePool, nc.Offering.CapacityType)
		}
	}
}

func TestUnavailableOfferingIsSkipped(t *testing.T) {
	gpu := pool("gpu", require(corev1.LabelInstanceTypeStable, "In", "g5.12xlarge", "g5.24xlarge", "g6.12xlarge"), require(v1alpha1.LabelCapacityType, "In", "on-demand"))
	inZoneA := func(p *corev1.Pod) {
		p.Spec.NodeSelector = map[string]string{zoneKey: "us-east-1a"}
		p.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"] = resource.MustParse("4")
	}
	s := snapshot(pods(2, "vllm", "40", "160Gi", inZoneA), gpu)
	for _, it := range s.InstanceTypes["gpu"] {
		for i := range it.Offerings {
			if it.Name == "g5.12xlarge" && it.Offerings[i].Zone == "us-east-1a" {
				it.Offerings[i].Available = false
			}
		}
	}
	r := solve(t, s, scheduler.Options{})
	if len(r.NewNodeClaims) != 2 {
		t.Fatalf("want 2 claims, got %d (%+v)", len(r.NewNodeClaims), r.Unschedulable)
	}
	for _, nc := range r.NewNodeClaims {
		for _, it := range nc.InstanceTypes {
			if it.Name == "g5.12xlarge" {
				t.Errorf("%s lists g5.12xlarge, which is short in us-east-1a", nc.Name)
			}
		}
	}
	big := pods(1, "huge", "1", "1Gi", func(p *corev1.Pod) {
		p.Spec.NodeSelector = map[string]string{zoneKey: "us-east-1a"}
		p.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"] = resource.MustParse("16")
	})
	r = solve(t, snapshot(big, gpu), scheduler.Options{})
	want := "nodepool gpu: no instance type offers 16 nvidia.com/gpu in zones [us-east-1a]"
	if len(r.Unschedulable) != 1 || r.Unschedulable[0].Reason != want {
		t.Errorf("reason = %+v, want %q", r.Unschedulable, want)
	}
}

func TestLimitsAreNeverExceeded(t *testing.T) {
	limited := pool("small", require(v1alpha1.LabelInstanceFamily, "In", "m6i"), func(np *v1alpha1.NodePool) {
		np.Spec.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16")}
	})
	r := solve(t, snapshot(pods(30, "web", "1", "1Gi"), limited), scheduler.Options{})
	var cpu int64
	for _, nc := range r.NewNodeClaims {
		largest := int64(0)
		for _, it := range nc.InstanceTypes {
			largest = max(largest, it.Capacity.CPU)
		}
		cpu += largest
	}
	if cpu > 16000 {
		t.Errorf("new capacity could reach %dm cpu, over the 16 cpu limit", cpu)
	}
	if len(r.Unschedulable) == 0 {
		t.Error("30 cpu of pods cannot fit under a 16 cpu limit; some must be unschedulable")
	} else if !strings.Contains(r.Unschedulable[0].Reason, "limit") {
		t.Errorf("reason %q should name the limit", r.Unschedulable[0].Reason)
	}
}

func TestExistingNodesAreUsedFirst(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", Labels: map[string]string{zoneKey: "us-east-1a", corev1.LabelHostname: "node-a"}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")}}}
	s := snapshot(pods(6, "web", "1", "1Gi"), pool("default"))
	s.Nodes = []*scheduler.StateNode{{Node: node}}
	r := solve(t, s, scheduler.Options{})
	if len(r.Existing) != 4 {
		t.Errorf("placed %d pods on the 4-cpu node, want 4", len(r.Existing))
	}
	if r.PodCount() != 6 {
		t.Errorf("placed %d of 6", r.PodCount())
	}
}

func TestDaemonSetOverheadCountsOnlyMatchingDaemonSets(t *testing.T) {
	ds := func(name string, selector map[string]string, cpu string) *appsv1.DaemonSet {
		return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			NodeSelector: selector, Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}}}
	}
	s := snapshot(pods(1, "web", "1", "1Gi"), pool("default", require(corev1.LabelArchStable, "In", "amd64")))
	s.DaemonSets = []*appsv1.DaemonSet{ds("everywhere", nil, "300m"), ds("arm-only", map[string]string{corev1.LabelArchStable: "arm64"}, "5")}
	r := solve(t, s, scheduler.Options{})
	if len(r.NewNodeClaims) != 1 {
		t.Fatalf("want 1 claim, got %d", len(r.NewNodeClaims))
	}
	if got := r.NewNodeClaims[0].DaemonSetRequests.CPU; got != 300 {
		t.Errorf("daemonset overhead %dm, want 300m (the arm-only daemonset does not run on amd64)", got)
	}
}

func TestVolumeTopology(t *testing.T) {
	withClaim := func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-" + p.Name}}}}
	}
	ps := pods(2, "db", "1", "1Gi", withClaim)
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	s := snapshot(ps, pool("default"))
	s.StorageClasses = []*storagev1.StorageClass{{ObjectMeta: metav1.ObjectMeta{Name: "ebs"}, VolumeBindingMode: &wffc,
		AllowedTopologies: []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: zoneKey, Values: []string{"us-east-1c"}}}}}}}
	s.PersistentVolumes = []*corev1.PersistentVolume{{ObjectMeta: metav1.ObjectMeta{Name: "pv-0"}, Spec: corev1.PersistentVolumeSpec{NodeAffinity: &corev1.VolumeNodeAffinity{
		Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: zoneKey, Operator: corev1.NodeSelectorOpIn, Values: []string{"us-east-1b"}}}}}}}}}}
	s.PersistentVolumeClaims = []*corev1.PersistentVolumeClaim{
		{ObjectMeta: metav1.ObjectMeta{Name: "data-db-000", Namespace: "default"}, Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-0"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "data-db-001", Namespace: "default"}, Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("ebs")}},
	}
	r := solve(t, s, scheduler.Options{})
	want := map[string]string{"db-000": "us-east-1b", "db-001": "us-east-1c"}
	for _, nc := range r.NewNodeClaims {
		for _, p := range nc.Pods {
			if z := nc.Requirements.Get(zoneKey).Values(); len(z) != 1 || z[0] != want[p.Name] {
				t.Errorf("%s landed in zones %v, want %s", p.Name, z, want[p.Name])
			}
		}
	}
	s.PersistentVolumeClaims = s.PersistentVolumeClaims[:1]
	r = solve(t, s, scheduler.Options{})
	if len(r.Unschedulable) != 1 || !strings.Contains(r.Unschedulable[0].Reason, "persistentvolumeclaim default/data-db-001 does not exist") {
		t.Errorf("want the missing claim named, got %+v", r.Unschedulable)
	}
}

func TestHostPortsKeepPodsApart(t *testing.T) {
	port := func(p *corev1.Pod) {
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
	}
	r := solve(t, snapshot(pods(3, "proxy", "100m", "64Mi", port), pool("default")), scheduler.Options{})
	if len(r.NewNodeClaims) != 3 {
		t.Errorf("3 pods on host port 8080 need 3 nodes, got %d", len(r.NewNodeClaims))
	}
}

func TestSolveIsDeterministic(t *testing.T) {
	build := func() *scheduler.Snapshot {
		ps := append(pods(30, "web", "500m", "1Gi", spread(zoneKey, 1)), pods(10, "db", "2", "8Gi", antiAffinity(corev1.LabelHostname))...)
		return snapshot(ps, pool("default"))
	}
	render := func(r *scheduler.Results) string {
		var b strings.Builder
		for _, nc := range r.NewNodeClaims {
			fmt.Fprintf(&b, "%s %s %v %.6f", nc.Name, nc.Requirements, nc.InstanceTypes[0].Name, nc.Price())
			for _, p := range nc.Pods {
				b.WriteString(" " + p.Name)
			}
			b.WriteString("\n")
		}
		return b.String()
	}
	first := render(solve(t, build(), scheduler.Options{}))
	for i := 0; i < 5; i++ {
		if got := render(solve(t, build(), scheduler.Options{})); got != first {
			t.Fatalf("run %d differs:\n%s\nvs\n%s", i, got, first)
		}
	}
}
