package simulate

import (
	"context"
	"fmt"

	"github.com/stowage-dev/stowage/controller/capacitybuffer"
)

// bookBuffers works out the scenario's CapacityBuffers against its
// PodTemplates, Deployments and Jobs as they are written (a scalableRef's
// replicas are the workload's at the start) and books their room in the
// cluster state, as the CapacityBuffer controller does in stowage run; the
// provisioner then keeps it, and real pods take it first.
func (sys *stowageSystem) bookBuffers(ctx context.Context) error {
	s := sys.w.s
	if len(s.CapacityBuffers) == 0 {
		return nil
	}
	outcomes, err := capacitybuffer.Book(ctx, s.CapacityBuffers, capacitybuffer.Objects{
		PodTemplates: s.PodTemplates, Deployments: s.Deployments, Jobs: s.Jobs})
	if err != nil {
		return fmt.Errorf("capacity buffers: %w", err)
	}
	for _, o := range outcomes {
		if o.Ours && !o.Ready {
			return fmt.Errorf("CapacityBuffer %s/%s: %s: %s", o.Buffer.Namespace, o.Buffer.Name, o.Reason, o.Message)
		}
	}
	for _, b := range capacitybuffer.Bookings(outcomes) {
		sys.w.cluster.SetBooking(b)
	}
	sys.batcher.Trigger()
	return nil
}
