package scheduler

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// AnnotationBookedBy marks a virtual pod: its value is the booking's owner,
// Kind/namespace/name.
const AnnotationBookedBy = v1alpha1.Group + "/booked-by"

// Booking is room kept for pods that do not exist yet: a CapacityBuffer's
// chunks, and any other kind of booked room (a ProvisioningRequest's pod
// sets) the same way. Its pods are virtual: the solver places them as it
// places pending pods, under the same pools, requirements, taints and
// spreads, but after every real pod, so that real pods take room first and
// the booking is provisioned again. They count in the claims they open
// (whose requests include them) and are never bound, nominated or evicted.
type Booking struct {
	// Owner names what booked the room.
	Owner BookingOwner
	// Pods are the virtual pods (VirtualPods builds them).
	Pods []*corev1.Pod
}

// BookingOwner names the object that booked room.
type BookingOwner struct {
	Kind, Namespace, Name string
}

func (o BookingOwner) String() string { return o.Kind + "/" + o.Namespace + "/" + o.Name }

// BookingResult is where one booking's virtual pods went.
type BookingResult struct {
	Owner BookingOwner
	// Existing were placed on existing nodes or in-flight claims (room
	// already there), New on claims this decision opens.
	Existing, New int
	// Unschedulable fit nowhere; Reason is the first one's reason.
	Unschedulable int
	Reason        string
}

// VirtualPods builds n virtual pods of a pod template for a booking, named
// after the owner (a deterministic suffix per index), annotated with it.
func VirtualPods(owner BookingOwner, tmpl corev1.PodTemplateSpec, n int) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, n)
	for i := range n {
		pod := &corev1.Pod{ObjectMeta: *tmpl.ObjectMeta.DeepCopy(), Spec: *tmpl.Spec.DeepCopy()}
		pod.Namespace = owner.Namespace
		pod.Name = virtualName(owner, i)
		pod.UID = ""
		pod.OwnerReferences = nil
		pod.Spec.NodeName = ""
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[AnnotationBookedBy] = owner.String()
		pod.Status = corev1.PodStatus{Phase: corev1.PodPending}
		pod.CreationTimestamp = metav1.Time{}
		out = append(out, pod)
	}
	return out
}

// virtualName is unique per owner and index, and within a pod name's 253
// characters whatever the owner's.
func virtualName(owner BookingOwner, i int) string {
	base := strings.ToLower(owner.Kind) + "-" + owner.Name
	if len(base) > 230 {
		base = base[:230]
	}
	return base + "-" + strconv.Itoa(i)
}

// BookedBy returns the owner a virtual pod was built for, and whether the
// pod is virtual.
func BookedBy(pod *corev1.Pod) (string, bool) {
	owner, ok := pod.Annotations[AnnotationBookedBy]
	return owner, ok
}

// IsVirtual reports whether a pod is a booking's.
func IsVirtual(pod *corev1.Pod) bool {
	_, ok := BookedBy(pod)
	return ok
}

// Pending is every pod a decision places: the snapshot's pending pods, then
// every booking's virtual pods.
func (s *Snapshot) Pending() []*corev1.Pod {
	if len(s.Bookings) == 0 {
		return s.Pods
	}
	out := append([]*corev1.Pod(nil), s.Pods...)
	for _, b := range s.Bookings {
		out = append(out, b.Pods...)
	}
	return out
}

// bookingResults counts, per booking of the snapshot, where its pods went.
func bookingResults(s *Snapshot, r *Results) []BookingResult {
	if len(s.Bookings) == 0 {
		return nil
	}
	index := map[string]int{}
	out := make([]BookingResult, len(s.Bookings))
	for i, b := range s.Bookings {
		out[i].Owner, index[b.Owner.String()] = b.Owner, i
	}
	at := func(pod *corev1.Pod) *BookingResult {
		if owner, ok := BookedBy(pod); ok {
			if i, ok := index[owner]; ok {
				return &out[i]
			}
		}
		return nil
	}
	for _, pl := range r.Existing {
		if b := at(pl.Pod); b != nil {
			b.Existing++
		}
	}
	for _, nc := range r.NewNodeClaims {
		for _, pod := range nc.Pods {
			if b := at(pod); b != nil {
				b.New++
			}
		}
	}
	for _, u := range r.Unschedulable {
		if b := at(u.Pod); b != nil {
			if b.Unschedulable == 0 {
				b.Reason = u.Reason
			}
			b.Unschedulable++
		}
	}
	return out
}

// boolRank orders false before true.
func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}
