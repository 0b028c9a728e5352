package e2e_test

import (
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/options"
	"github.com/stowage-dev/stowage/internal/testbed"
)

// failoverNS holds the benchmark's workloads.
const failoverNS = "failover"

// BenchmarkLeaderFailover kills the leader on the bed, with a standby
// waiting, right after its first CreateFleet for a new workload of 3 pods
// (2 CPU each, one per node): once leaving its lease to expire (a crash), once releasing
// it (a graceful stop). Each handover must pass failOver's checks (one
// leader at a time, no claim asked for twice, the standby takes over); the
// benchmark prints one BENCH line per mode with the medians over the rounds:
// gap, from the old leader's last renewal (or its release) to the standby's
// acquisition, by the Lease's timestamps; elected_after_kill and
// running_after_kill, wall time from the kill to the standby leading and to
// every pod running; and the lease settings the bed runs with.
func BenchmarkLeaderFailover(b *testing.B) {
	bd := startBed(b, testbed.Options{})
	bd.create(nodeClass(), nodePool())
	bd.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: failoverNS}})
	o, err := options.Parse(bd.Flags(), func(string) string { return "" }, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []struct {
		name    string
		release bool
	}{{"crash", false}, {"graceful", true}} {
		var rounds []failover
		cpu0, bed0 := cpuSeconds(), childCPUSeconds()
		for round := range b.N {
			rounds = append(rounds, bd.failoverRound(fmt.Sprintf("%s-%d", mode.name, round), mode.release))
		}
		cpu, bedCPU := cpuSeconds()-cpu0, childCPUSeconds()-bed0
		median := func(of func(failover) time.Duration) float64 {
			var ds []time.Duration
			for _, r := range rounds {
				ds = append(ds, of(r))
			}
			slices.Sort(ds)
			return quantile(ds, 0.5).Seconds()
		}
		fmt.Printf("BENCH e2e=failover mode=%s gap=%.2fs elected_after_kill=%.2fs running_after_kill=%.2fs lease=%s retry=%s rounds=%d pods=3 cpu_seconds=%.3f bed_cpu_seconds=%.3f\n",
			mode.name, median(func(f failover) time.Duration { return f.handover.Gap }),
			median(func(f failover) time.Duration { return f.elected }), median(func(f failover) time.Duration { return f.running }),
			o.LeaseDuration, o.RetryPeriod, len(rounds), cpu, bedCPU)
	}
}

// failoverRound starts a leader (releasing its lease on stop or not), hands
// over to a standby with failOver, and then deletes the workload and every
// claim through the standby, so that the next round starts from an empty bed.
func (b *bed) failoverRound(name string, release bool) failover {
	leader := b.startReplica(name+"-leader", replicaOptions{releaseOnCancel: release})
	b.waitElected(leader, settle)
	b.waitSynced(leader)
	standby, f := b.failOver(leader, name+"-standby", failoverNS, name, 3)
	b.deleteEverything(b.t, failoverNS, name)
	if err := standby.stop(); err != nil {
		b.t.Fatal(err)
	}
	return f
}
