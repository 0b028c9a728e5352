package simulate

import (
	"context"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/stowage-dev/stowage/controller/capacitybuffer"
)

// bufferBook is what the scenario's CapacityBuffers booked last: the
// replicas of the Deployments they read, and the chunks by buffer.
type bufferBook struct {
	replicas []int32
	chunks   map[string]int
}

// chunksOf is what a buffer booked, and whether it booked; nothing for a nil book.
func (b *bufferBook) chunksOf(owner string) (int, bool) {
	if b == nil {
		return 0, false
	}
	n, ok := b.chunks[owner]
	return n, ok
}

// bookBuffers works out the scenario's CapacityBuffers against its
// PodTemplates, Deployments and Jobs and books their room in the cluster
// state, as the CapacityBuffer controller does in stowage run whenever a
// workload it reads changes: at the start, and again whenever a Deployment's
// replica curve changes its count (a percentage of a scalableRef's replicas
// follows them). The provisioner then keeps the room, and real pods take it
// first. Nothing is booked again while the counts stand.
func (sys *stowageSystem) bookBuffers(ctx context.Context) error {
	s := sys.w.s
	if len(s.CapacityBuffers) == 0 {
		return nil
	}
	deployments, replicas := sys.scaledDeployments()
	if sys.buffers != nil && slices.Equal(replicas, sys.buffers.replicas) {
		return nil
	}
	outcomes, err := capacitybuffer.Book(ctx, s.CapacityBuffers, capacitybuffer.Objects{
		PodTemplates: s.PodTemplates, Deployments: deployments, Jobs: s.Jobs})
	if err != nil {
		return fmt.Errorf("capacity buffers: %w", err)
	}
	for _, o := range outcomes {
		if o.Ours && !o.Ready {
			return fmt.Errorf("CapacityBuffer %s/%s: %s: %s", o.Buffer.Namespace, o.Buffer.Name, o.Reason, o.Message)
		}
	}
	book := &bufferBook{replicas: replicas, chunks: map[string]int{}}
	changed := sys.buffers == nil
	bookings := capacitybuffer.Bookings(outcomes)
	for _, b := range bookings {
		book.chunks[b.Owner.String()] = len(b.Pods)
		if was, _ := sys.buffers.chunksOf(b.Owner.String()); sys.buffers == nil || was != len(b.Pods) {
			sys.w.cluster.SetBooking(b)
			changed = true
		}
	}
	for _, b := range sys.w.cluster.Bookings() { // a buffer that books nothing now
		if _, was := sys.buffers.chunksOf(b.Owner.String()); was && book.chunks[b.Owner.String()] == 0 {
			sys.w.cluster.RemoveBooking(b.Owner)
			changed = true
		}
	}
	sys.buffers = book
	if changed {
		sys.batcher.Trigger()
	}
	return nil
}

// scaledDeployments are the scenario's Deployments at the replicas their
// curves give now (as written for one no workload names), and those counts.
func (sys *stowageSystem) scaledDeployments() ([]*appsv1.Deployment, []int32) {
	t := sys.w.elapsed()
	out := make([]*appsv1.Deployment, len(sys.w.s.Deployments))
	var replicas []int32
	for i, d := range sys.w.s.Deployments {
		out[i] = d
		for _, ws := range sys.w.workloads {
			if ws.spec.Deployment == "" || !matchesKey(d.ObjectMeta, ws.spec.Deployment) {
				continue
			}
			n := int32(ws.desired(t))
			out[i] = d.DeepCopy()
			out[i].Spec.Replicas = &n
			replicas = append(replicas, n)
			break
		}
	}
	return out, replicas
}
