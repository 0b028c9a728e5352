package scheduler_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// gpuPool allows g5.12xlarge reserved or on-demand in us-east-1a, as the
// seed's GPU tier does with a block.
func gpuPool(mutate ...func(*v1alpha1.NodePool)) *v1alpha1.NodePool {
	return pool("gpu", append([]func(*v1alpha1.NodePool){
		require(corev1.LabelInstanceTypeStable, v1alpha1.OperatorIn, "g5.12xlarge", "g5.24xlarge"),
		require(v1alpha1.LabelCapacityType, v1alpha1.OperatorIn, v1alpha1.CapacityTypeReserved, v1alpha1.CapacityTypeOnDemand),
		require(corev1.LabelTopologyZone, v1alpha1.OperatorIn, "us-east-1a"),
	}, mutate...)...)
}

// gpuTypes is the builtin catalogue with a reservation of room places on
// g5.12xlarge in us-east-1a: a Capacity Block from start to end, or an
// On-Demand Capacity Reservation when end is zero.
func gpuTypes(id string, room int, start, end time.Time) []*cloudprovider.InstanceType {
	opts := catalogue.DefaultOptions()
	opts.CapacityTypes = []string{v1alpha1.CapacityTypeSpot, v1alpha1.CapacityTypeOnDemand}
	var out []*cloudprovider.InstanceType
	for _, info := range catalogue.Builtin() {
		it := catalogue.InstanceTypes([]catalogue.Info{info}, opts)[0]
		if info.Name == "g5.12xlarge" {
			typ := v1alpha1.CapacityReservationTypeDefault
			if !end.IsZero() {
				typ = v1alpha1.CapacityReservationTypeCapacityBlock
			}
			ofs := append(it.Offerings, cloudprovider.Offering{Zone: "us-east-1a", CapacityType: v1alpha1.CapacityTypeReserved,
				Available: room > 0, ReservationID: id, ReservationCapacity: room, ReservationType: typ, ReservationStart: start, ReservationEnd: end})
			it = catalogue.NewInstanceType(info, opts, ofs)
		}
		out = append(out, it)
	}
	return out
}

func vllm(n int) []*corev1.Pod {
	return pods(n, "vllm", "16", "64Gi", func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"] = resource.MustParse("4")
	})
}

func byOffering(r *scheduler.Results) map[string]int {
	out := map[string]int{}
	for _, nc := range r.NewNodeClaims {
		key := nc.InstanceTypes[0].Name + "/" + nc.Offering.CapacityType
		if nc.Offering.ReservationID != "" {
			key += "/" + nc.Offering.ReservationID
		}
		out[key]++
	}
	return out
}

// TestReservedFirstCountsWhatIsLeft: five vLLM pods and a reservation of
// two g5.12xlarge: two claims take its places (at no price), the other
// three fall to on-demand, and none is priced in a full reservation.
func TestReservedFirstCountsWhatIsLeft(t *testing.T) {
	s := &scheduler.Snapshot{Pods: vllm(5), NodePools: []*v1alpha1.NodePool{gpuPool()},
		InstanceTypes: map[string][]*cloudprovider.InstanceType{"gpu": gpuTypes("cr-0123456789abcdef0", 2, time.Time{}, time.Time{})}}
	r := solve(t, s, scheduler.Options{})
	want := map[string]int{"g5.12xlarge/reserved/cr-0123456789abcdef0": 2, "g5.12xlarge/on-demand": 3}
	if got := byOffering(r); !equalCounts(got, want) {
		t.Fatalf("claims by offering %v, want %v", got, want)
	}
	if p := r.TotalPrice(); p < 3*5.67 || p > 3*5.68 {
		t.Fatalf("the decision costs %.3f/h, want three on-demand g5.12xlarge", p)
	}
}

// TestBlocksOnlyInsideTheirWindow: a Capacity Block of two is used from its
// start until its end less the pool's lead time, and not before or after.
func TestBlocksOnlyInsideTheirWindow(t *testing.T) {
	start := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	end := start.Add(6 * time.Hour)
	cases := []struct {
		name    string
		now     time.Time
		lead    time.Duration
		inBlock int
	}{
		{"an hour before its start", start.Add(-time.Hour), time.Hour, 0},
		{"at its start", start, time.Hour, 2},
		{"just inside the default lead time", end.Add(-61 * time.Minute), time.Hour, 2},
		{"inside the default lead time", end.Add(-59 * time.Minute), time.Hour, 0},
		{"inside a 45-minute lead time", end.Add(-50 * time.Minute), 45 * time.Minute, 2},
		{"after its end", end.Add(time.Minute), time.Hour, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			np := gpuPool(func(np *v1alpha1.NodePool) { np.Spec.CapacityBlockLeadTime = &metav1.Duration{Duration: tc.lead} })
			s := &scheduler.Snapshot{Pods: vllm(3), NodePools: []*v1alpha1.NodePool{np}, Now: tc.now,
				InstanceTypes: map[string][]*cloudprovider.InstanceType{"gpu": gpuTypes("cr-0b10c0000000000a1", 2, start, end)}}
			r := solve(t, s, scheduler.Options{})
			if got := byOffering(r)["g5.12xlarge/reserved/cr-0b10c0000000000a1"]; got != tc.inBlock {
				t.Fatalf("%d claims in the block, want %d (%v)", got, tc.inBlock, byOffering(r))
			}
			if r.PodCount() != 3 {
				t.Fatalf("placed %d of 3 pods", r.PodCount())
			}
		})
	}
}

// TestABufferOfThreeWithNoPendingPod is the "done": with no pending
// pod, a booking of three virtual pods opens capacity for the three, and
// says so.
func TestABufferOfThreeWithNoPendingPod(t *testing.T) {
	owner := scheduler.BookingOwner{Kind: "CapacityBuffer", Namespace: "default", Name: "vllm"}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: vllm(1)[0].ObjectMeta, Spec: vllm(1)[0].Spec}
	s := snapshot(nil, pool("default"))
	s.Bookings = []scheduler.Booking{{Owner: owner, Pods: scheduler.VirtualPods(owner, tmpl, 3)}}
	r := solve(t, s, scheduler.Options{})
	if len(r.Bookings) != 1 || r.Bookings[0].New != 3 || r.Bookings[0].Existing != 0 || r.Bookings[0].Unschedulable != 0 {
		t.Fatalf("booking results %+v, want three on new claims", r.Bookings)
	}
	var cpu int64
	for _, nc := range r.NewNodeClaims {
		for _, p := range nc.Pods {
			if !scheduler.IsVirtual(p) {
				t.Fatalf("claim %s holds %s, not a virtual pod", nc.Name, p.Name)
			}
		}
		cpu += nc.Requests.CPU
	}
	if cpu < 48000 {
		t.Fatalf("the claims request %dm CPU, want room for three 16-CPU chunks", cpu)
	}
}

// TestRealPodsTakeTheRoomFirst: a real pod and a virtual one of the same
// shape, with room for one on an existing node: the real pod takes it, the
// virtual pod opens a claim.
func TestRealPodsTakeTheRoomFirst(t *testing.T) {
	owner := scheduler.BookingOwner{Kind: "CapacityBuffer", Namespace: "default", Name: "web"}
	real := pods(1, "web", "3", "4Gi")
	s := snapshot(real, pool("default"))
	s.Nodes = []*scheduler.StateNode{readyNode("ready-1", "4", "8Gi")}
	s.Bookings = []scheduler.Booking{{Owner: owner, Pods: scheduler.VirtualPods(owner, corev1.PodTemplateSpec{ObjectMeta: real[0].ObjectMeta, Spec: real[0].Spec}, 1)}}
	r := solve(t, s, scheduler.Options{})
	if len(r.Existing) != 1 || r.Existing[0].Pod.Name != real[0].Name {
		t.Fatalf("existing placements %v, want the real pod on the node", r.Existing)
	}
	if r.Bookings[0].New != 1 || len(r.NewNodeClaims) != 1 {
		t.Fatalf("booking %+v with %d claims, want the virtual pod on a new claim", r.Bookings[0], len(r.NewNodeClaims))
	}
}

// TestFloorsAreFilled: a pool with minNodes 3, one node staying and one
// leaving, and one pending pod: the pod's claim counts, and one empty claim
// of the pool's cheapest type makes up the floor; without FillFloors (a
// disruption's simulation) none is opened.
func TestFloorsAreFilled(t *testing.T) {
	np := pool("default", func(np *v1alpha1.NodePool) { np.Spec.MinNodes = ptr.To[int32](3) })
	leaving := readyNode("leaving", "2", "4Gi")
	leaving.MarkedForDeletion = true
	s := snapshot(pods(1, "web", "6", "8Gi"), np)
	s.Nodes = []*scheduler.StateNode{readyNode("staying", "2", "4Gi"), leaving}
	r := solve(t, s, scheduler.Options{FillFloors: true})
	if len(r.NewNodeClaims) != 2 || len(r.NewNodeClaims[0].Pods)+len(r.NewNodeClaims[1].Pods) != 1 {
		t.Fatalf("%d claims, want the pod's and one empty floor claim", len(r.NewNodeClaims))
	}
	if r := solve(t, s, scheduler.Options{}); len(r.NewNodeClaims) != 1 {
		t.Fatalf("%d claims without FillFloors, want the pod's only", len(r.NewNodeClaims))
	}
}

// TestAFloorFillsABlockFirst: a floor of two in the GPU pool, with a block
// of two active: both floor claims go into the block.
func TestAFloorFillsABlockFirst(t *testing.T) {
	start := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	np := gpuPool(func(np *v1alpha1.NodePool) { np.Spec.MinNodes = ptr.To[int32](2) })
	s := &scheduler.Snapshot{NodePools: []*v1alpha1.NodePool{np}, Now: start.Add(time.Hour),
		InstanceTypes: map[string][]*cloudprovider.InstanceType{"gpu": gpuTypes("cr-0b10c0000000000a1", 2, start, start.Add(6*time.Hour))}}
	r := solve(t, s, scheduler.Options{FillFloors: true})
	if got := byOffering(r); !equalCounts(got, map[string]int{"g5.12xlarge/reserved/cr-0b10c0000000000a1": 2}) {
		t.Fatalf("floor claims by offering %v, want both in the block", got)
	}
}

func readyNode(name, cpu, mem string) *scheduler.StateNode {
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem),
		corev1.ResourcePods: resource.MustParse("110")}
	return &scheduler.StateNode{Node: &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1alpha1.LabelNodePool: "default", corev1.LabelHostname: name,
			corev1.LabelTopologyZone: "us-east-1a"}},
		Status: corev1.NodeStatus{Allocatable: alloc, Capacity: alloc,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
