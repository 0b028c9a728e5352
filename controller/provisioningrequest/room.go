package provisioningrequest

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// Room is where a request's pods went in a solve of them alone.
type Room struct {
	// Nodes are the existing nodes (and in-flight claims) that took some,
	// sorted.
	Nodes []string
	// New is how many went on claims the solve opened; Short how many fit
	// nowhere, the first one's reason in Reason.
	New, Short int
	Reason     string
}

// Fits reports whether every pod found room that exists.
func (r Room) Fits() bool { return r.New == 0 && r.Short == 0 }

// Shortage says how many of want pods found no room, and why.
func (r Room) Shortage(want int) string {
	return fmt.Sprintf("%d of the %d pods found no capacity: %s", r.Short, want, r.Reason)
}

// Solve places the request's pods (b) in snap after every other booking
// (others), leaving snap's pending pods out: the question is whether the
// request fits beside what runs and what is booked, not beside other pods
// still waiting. snap is not changed.
func Solve(snap *scheduler.Snapshot, others []scheduler.Booking, b scheduler.Booking, opts scheduler.Options) Room {
	s := *snap
	s.Pods = nil
	s.Bookings = append(slices.DeleteFunc(slices.Clone(others), func(o scheduler.Booking) bool { return o.Owner == b.Owner }), b)
	r := scheduler.Solve(&s, opts)
	owner := b.Owner.String()
	ours := func(pod *corev1.Pod) bool { o, ok := scheduler.BookedBy(pod); return ok && o == owner }
	var room Room
	for _, pl := range r.Existing {
		if ours(pl.Pod) && !slices.Contains(room.Nodes, pl.Node) {
			room.Nodes = append(room.Nodes, pl.Node)
		}
	}
	slices.Sort(room.Nodes)
	for _, nc := range r.NewNodeClaims {
		room.New += len(slices.DeleteFunc(slices.Clone(nc.Pods), func(p *corev1.Pod) bool { return !ours(p) }))
	}
	for _, u := range r.Unschedulable {
		if ours(u.Pod) {
			if room.Short == 0 {
				room.Reason = u.Reason
			}
			room.Short++
		}
	}
	return room
}

// Registered is snap with only the nodes that have registered and are not
// being deleted, and no instance types: the room that exists now.
func Registered(snap *scheduler.Snapshot) *scheduler.Snapshot {
	s := *snap
	s.InstanceTypes = nil
	s.Nodes = slices.DeleteFunc(slices.Clone(snap.Nodes), func(n *scheduler.StateNode) bool {
		return n.Node == nil || n.MarkedForDeletion || n.Node.DeletionTimestamp != nil
	})
	return &s
}

// Pin keeps pods to nodes: each gets a required node affinity for a
// hostname among them, added to every term it already has. A pinned pod is
// placed on those nodes or nowhere, so that a booking of them never opens a
// claim.
func Pin(pods []*corev1.Pod, nodes []string) {
	req := corev1.NodeSelectorRequirement{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: slices.Clone(nodes)}
	for _, pod := range pods {
		if pod.Spec.Affinity == nil {
			pod.Spec.Affinity = &corev1.Affinity{}
		}
		if pod.Spec.Affinity.NodeAffinity == nil {
			pod.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
		}
		na := pod.Spec.Affinity.NodeAffinity
		if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
			na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
		}
		terms := &na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		if len(*terms) == 0 {
			*terms = []corev1.NodeSelectorTerm{{}}
		}
		for i := range *terms {
			(*terms)[i].MatchExpressions = append((*terms)[i].MatchExpressions, req)
		}
	}
}

// joinNodes and splitNodes write and read the held nodes of a request's
// status detail.
func joinNodes(nodes []string) string { return strings.Join(nodes, ",") }

func splitNodes(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
