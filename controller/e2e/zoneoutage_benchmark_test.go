package e2e_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testbed"
)

// outagePods is how many pods (one per c6i.large node) the zone outage
// spreads over three zones.
const outagePods = 36

// BenchmarkBedZoneOutage loses one zone of the bed: a deployment of
// outagePods pods spread over three zones (ScheduleAnyway) runs, one pod per
// node; then every launch into the first zone fails (its offerings short in
// the emulator) and its nodes' kubelets go silent. kube-controller-manager
// marks them Unknown after its grace period and taints them NoExecute at
// its zone eviction rate; its taint-eviction controller evicts their pods
// when the 300 s toleration that the DefaultTolerationSeconds admission
// plugin gives them runs out, and Stowage re-provisions them in the other
// zones. It prints one BENCH line: the pods the zone held, the seconds from
// the outage until every pod runs outside the zone again, the nodes
// launched meanwhile, and the CPU time of this process and of the bed's
// components. Repair stays out of it: a third of the pool is unhealthy.
func BenchmarkBedZoneOutage(b *testing.B) {
	const ns, app = "outage", "web"
	bd := startBed(b, testbed.Options{TaintEviction: true})
	bd.create(nodeClass(), onDemandPool(poolName, 0, "c6i.large"), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	r := bd.startReplica("outage", replicaOptions{releaseOnCancel: true})
	bd.waitElected(r, 30*time.Second)
	bd.create(spreadOverZones(deployment(ns, app, outagePods, "1500m")))
	bd.eventually(5*time.Minute, bd.running(ns, app, outagePods))
	lost := bd.Emulator.Zones()[0].Name
	for range b.N {
		lostNodes, lostPods := bd.inZone(ns, app, lost)
		if len(lostNodes) == 0 {
			b.Fatalf("no pod of %s runs in %s: nothing to lose", app, lost)
		}
		before := len(bd.Emulator.Instances())
		cpu0, bed0 := cpuSeconds(), childCPUSeconds()
		start := time.Now()
		bd.Emulator.SetShortage(true, zoneKeys(bd.Emulator, lost)...)
		for _, n := range lostNodes {
			bd.silence(n)
		}
		bd.eventually(20*time.Minute, bd.runningOutside(ns, app, outagePods, lostNodes))
		elapsed := time.Since(start)
		fmt.Printf("BENCH e2e=zone-outage nodes=%d pods=%d lost_zone_pods=%d seconds_to_all_running=%.0f nodes_launched=%d cpu_seconds=%.3f bed_cpu_seconds=%.3f\n",
			outagePods, outagePods, lostPods, elapsed.Seconds(), len(bd.Emulator.Instances())-before, cpuSeconds()-cpu0, childCPUSeconds()-bed0)
	}
}

// spreadOverZones spreads the deployment's pods over the zones, as a
// preference (ScheduleAnyway), so that a lost zone's pods may run elsewhere.
func spreadOverZones(d *appsv1.Deployment) *appsv1.Deployment {
	d.Spec.Template.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.ScheduleAnyway,
		LabelSelector: &metav1.LabelSelector{MatchLabels: d.Spec.Selector.MatchLabels},
	}}
	return d
}

// inZone lists the nodes of the zone that pods of app run on, and how many
// pods run there.
func (b *bed) inZone(ns, app, zone string) (nodes []string, pods int) {
	b.t.Helper()
	for _, n := range b.nodesOf(ns, app) {
		var node corev1.Node
		if err := b.Admin.Get(context.Background(), client.ObjectKey{Name: n}, &node); err != nil {
			b.t.Fatal(err)
		}
		if node.Labels[corev1.LabelTopologyZone] == zone {
			nodes = append(nodes, n)
		}
	}
	all, err := b.pods(ns, app)
	if err != nil {
		b.t.Fatal(err)
	}
	for _, p := range all {
		if slices.Contains(nodes, p.Spec.NodeName) {
			pods++
		}
	}
	return nodes, pods
}

// runningOutside checks that want pods of app run, none on the nodes.
func (b *bed) runningOutside(ns, app string, want int, nodes []string) func() error {
	return func() error {
		pods, err := b.pods(ns, app)
		if err != nil {
			return err
		}
		n, stranded := 0, 0
		for _, p := range pods {
			switch {
			case slices.Contains(nodes, p.Spec.NodeName):
				stranded++
			case p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil:
				n++
			}
		}
		if n != want {
			return fmt.Errorf("%d of %d %s pods run outside the lost zone (%d still on its nodes)", n, want, app, stranded)
		}
		return nil
	}
}

// zoneKeys lists the emulator's pools in the zone.
func zoneKeys(emu *awsemu.Emulator, zone string) []awsemu.PoolKey {
	var out []awsemu.PoolKey
	for _, k := range emu.PoolKeys() {
		if k.Zone == zone {
			out = append(out, k)
		}
	}
	return out
}
