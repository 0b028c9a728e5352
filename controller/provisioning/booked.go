package provisioning

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// Room booked for pods that do not exist yet (a CapacityBuffer's chunks)
// and the pools' floors: every decision places the cluster state's
// bookings after the pending pods and fills the floors, so a batch runs
// with no pending pod when there is either. A virtual pod is never
// nominated, and gets no event: its booking's status reports it.

// WithBookingObserver has the provisioner tell observe where each
// decision put the bookings' virtual pods (the CapacityBuffer controller
// writes their status from it).
func WithBookingObserver(observe func([]scheduler.BookingResult)) Option {
	return func(p *Provisioner) { p.bookingsSeen = observe }
}

// decisionOptions are the solve options of a decision: the shared ones, and
// the floors filled.
func (p *Provisioner) decisionOptions() scheduler.Options {
	opts := p.solve
	opts.FillFloors = true
	return opts
}

func (p *Provisioner) observeBookings(results []scheduler.BookingResult) {
	if p.bookingsSeen != nil && !p.dryRun {
		p.bookingsSeen(results)
	}
}

// anyFloor reports whether a pool has a minNodes.
func anyFloor(pools []*v1alpha1.NodePool) bool {
	for _, np := range pools {
		if np.FloorNodes() > 0 {
			return true
		}
	}
	return false
}

// realPods drops the virtual pods.
func realPods(pods []*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(pods))
	for _, pod := range pods {
		if !scheduler.IsVirtual(pod) {
			out = append(out, pod)
		}
	}
	return out
}
