package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/internal/testbed"
)

// benchPods is how many pods each round creates at once.
const benchPods = 20

// BenchmarkPodToRunning measures, on the whole bed with the default 1 s
// batch idle window, the wall time from creating a pod that no node can take
// to seeing it Running on a node Stowage launched for it: kube-scheduler's
// verdict, the batch window, the solve, CreateFleet on the emulator (500 ms
// pending), the Node's registration by the bridge, Stowage's adoption of it,
// kwok's readiness and kube-scheduler's binding. It prints one BENCH line
// with the median and 95th percentile over every pod of every round, the
// CPU time of this process (Stowage, the emulator, the bridge) and of the
// bed's components over the rounds.
func BenchmarkPodToRunning(b *testing.B) {
	bd := startBed(b, testbed.Options{})
	bd.create(nodeClass(), nodePool())
	r := bd.startReplica("bench", replicaOptions{releaseOnCancel: true})
	bd.waitElected(r, 30*time.Second)
	bd.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}})
	var latencies []time.Duration
	cpu0, bed0 := cpuSeconds(), childCPUSeconds()
	b.ResetTimer()
	for round := range b.N {
		latencies = append(latencies, bd.podsToRunning(fmt.Sprintf("round%d", round))...)
	}
	b.StopTimer()
	cpu, bedCPU := cpuSeconds()-cpu0, childCPUSeconds()-bed0
	claims, err := bd.claims()
	if err != nil {
		b.Fatal(err)
	}
	slices.Sort(latencies)
	fmt.Printf("BENCH e2e=pod-to-running pods=%d nodeclaims=%d p50=%.2fs p95=%.2fs max=%.2fs cpu_seconds=%.3f bed_cpu_seconds=%.3f\n",
		len(latencies), len(claims), quantile(latencies, 0.50).Seconds(), quantile(latencies, 0.95).Seconds(),
		latencies[len(latencies)-1].Seconds(), cpu, bedCPU)
}

// podsToRunning creates benchPods pods of 500m and 1Gi and returns, for
// each, the time from its creation to the first poll that sees it Running.
func (b *bed) podsToRunning(round string) []time.Duration {
	ctx := context.Background()
	created := map[string]time.Time{}
	for i := range benchPods {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: fmt.Sprintf("%s-%d", round, i), Labels: map[string]string{"round": round}},
			Spec:       podSpec("500m"),
		}
		if err := b.Admin.Create(ctx, pod); err != nil {
			b.t.Fatal(err)
		}
		created[pod.Name] = time.Now()
	}
	running := map[string]time.Duration{}
	err := wait.PollUntilContextTimeout(ctx, 25*time.Millisecond, 3*time.Minute, true, func(context.Context) (bool, error) {
		if err := b.Err(); err != nil {
			return false, err
		}
		var pods corev1.PodList
		if err := b.Admin.List(ctx, &pods, client.InNamespace("bench"), client.MatchingLabels{"round": round}); err != nil {
			return false, nil //nolint:nilerr // retried on the next poll
		}
		now := time.Now()
		for _, p := range pods.Items {
			if _, seen := running[p.Name]; !seen && p.Status.Phase == corev1.PodRunning {
				running[p.Name] = now.Sub(created[p.Name])
			}
		}
		return len(running) == benchPods, nil
	})
	if err != nil {
		b.t.Fatalf("%d of %d pods running: %v", len(running), benchPods, err)
	}
	out := make([]time.Duration, 0, len(running))
	for _, d := range running {
		out = append(out, d)
	}
	return out
}

// quantile returns the q-quantile of sorted durations (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(float64(len(sorted))*q+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// cpuSeconds is this process's user and system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// clockTicks is Linux's USER_HZ, the unit of /proc/<pid>/stat's CPU times.
const clockTicks = 100

// childCPUSeconds sums the user and system CPU time of this process's
// running children (the bed's components), from /proc; 0 where there is none.
func childCPUSeconds() float64 {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	self := strconv.Itoa(os.Getpid())
	var ticks int64
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// Fields after the command, which is in parentheses and may hold spaces:
		// state ppid ... utime (11th) stime (12th).
		end := strings.LastIndexByte(string(data), ')')
		if end < 0 {
			continue
		}
		f := strings.Fields(string(data[end+1:]))
		if len(f) < 13 || f[1] != self {
			continue
		}
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += utime + stime
	}
	return float64(ticks) / clockTicks
}
