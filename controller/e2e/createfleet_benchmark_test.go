package e2e_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testbed"
)

// The bursts of BenchmarkUnschedulableToCreateFleet: each of burstPods
// web pods, one burst after the previous one runs.
const (
	bursts    = 5
	burstPods = 20
	burstNS   = "bursts"
)

// BenchmarkUnschedulableToCreateFleet measures, on the bed with the seed's
// pools and the default 1 s batch idle window, the time from kube-scheduler
// marking a pod unschedulable to the emulator receiving the CreateFleet
// request that launches the NodeClaim the pod was nominated to: the batch
// window, the solve, the NodeClaim's creation, the lifecycle controller's
// launch. Pods arrive in bursts of burstPods web pods (1 CPU, 2Gi), each
// after the previous burst runs, so that no in-flight claim absorbs them.
//
// A pod's start is when a watch sees its PodScheduled=False/Unschedulable
// condition: the condition's lastTransitionTime has whole seconds only, so
// the line also gives the percentiles from it (which overstate by up to 1 s).
// Pods kube-scheduler bound at once (room left on an earlier burst's nodes)
// and pods nominated to a node or to a claim launched before they were
// unschedulable are counted but not measured.
func BenchmarkUnschedulableToCreateFleet(b *testing.B) {
	bd := startBed(b, testbed.Options{InstanceTypes: seedCatalogue()})
	pools, err := bd.SeedPools("../../" + testbed.SeedFile)
	if err != nil {
		b.Fatal(err)
	}
	bd.create(pools...)
	fleets := observeFleets(bd.Emulator)
	r := bd.startReplica("bench", replicaOptions{releaseOnCancel: true})
	bd.waitElected(r, 30*time.Second)
	bd.waitSynced(r)
	bd.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: burstNS}})
	seen := bd.watchUnschedulable(burstNS)
	var m burstMeasures
	cpu0, bed0 := cpuSeconds(), childCPUSeconds()
	b.ResetTimer()
	for round := range b.N {
		for i := range bursts {
			bd.burst(fmt.Sprintf("r%d-b%d", round, i))
		}
	}
	b.StopTimer()
	cpu, bedCPU := cpuSeconds()-cpu0, childCPUSeconds()-bed0
	m.measure(bd, seen, fleets)
	if len(m.fromWatch) == 0 {
		b.Fatalf("no pod was measured: %+v", m)
	}
	slices.Sort(m.fromWatch)
	slices.Sort(m.fromTransition)
	fmt.Printf("BENCH e2e=unschedulable-to-createfleet pods=%d p50=%.3fs p99=%.3fs max=%.3fs p50_from_transition_time=%.3fs p99_from_transition_time=%.3fs bursts=%d bound_at_once=%d joined=%d cpu_seconds=%.3f bed_cpu_seconds=%.3f\n",
		len(m.fromWatch), quantile(m.fromWatch, 0.50).Seconds(), quantile(m.fromWatch, 0.99).Seconds(),
		m.fromWatch[len(m.fromWatch)-1].Seconds(), quantile(m.fromTransition, 0.50).Seconds(), quantile(m.fromTransition, 0.99).Seconds(),
		bursts*b.N, m.boundAtOnce, m.joined, cpu, bedCPU)
}

// fleetTimes records when the emulator received each CreateFleet request,
// by client token (the first receipt: an SDK retry keeps the token).
type fleetTimes struct {
	mu       sync.Mutex
	received map[string]time.Time // client token -> first receipt
}

func observeFleets(emu *awsemu.Emulator) *fleetTimes {
	f := &fleetTimes{received: map[string]time.Time{}}
	emu.OnCall(func(c awsemu.Call) {
		if c.Action != "CreateFleet" {
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if _, ok := f.received[c.ClientToken]; !ok {
			f.received[c.ClientToken] = c.Received
		}
	})
	return f
}

func (f *fleetTimes) get(token string) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.received[token]
	return t, ok
}

// unschedulable is when a pod was first seen unschedulable: by the watch,
// and by the condition's lastTransitionTime.
type unschedulable struct{ seen, transition time.Time }

// unschedulableTimes is pod name -> when it was first seen unschedulable.
type unschedulableTimes struct {
	mu   sync.Mutex
	pods map[string]unschedulable
}

func (u *unschedulableTimes) all() map[string]unschedulable {
	u.mu.Lock()
	defer u.mu.Unlock()
	return maps.Clone(u.pods)
}

func (u *unschedulableTimes) get(name string) (unschedulable, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	t, ok := u.pods[name]
	return t, ok
}

// watchUnschedulable watches the pods of ns until the benchmark ends,
// noting when each is first seen with PodScheduled=False/Unschedulable.
func (b *bed) watchUnschedulable(ns string) *unschedulableTimes {
	c, err := client.NewWithWatch(b.ControlPlane.Config, client.Options{Scheme: b.Admin.Scheme()})
	if err != nil {
		b.t.Fatal(err)
	}
	w, err := c.Watch(context.Background(), &corev1.PodList{}, client.InNamespace(ns))
	if err != nil {
		b.t.Fatal(err)
	}
	b.root.Cleanup(w.Stop)
	u := &unschedulableTimes{pods: map[string]unschedulable{}}
	go func() {
		for ev := range w.ResultChan() {
			now := time.Now()
			p, ok := ev.Object.(*corev1.Pod)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			for _, cond := range p.Status.Conditions {
				if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable {
					u.mu.Lock()
					if _, ok := u.pods[p.Name]; !ok {
						u.pods[p.Name] = unschedulable{seen: now, transition: cond.LastTransitionTime.Time}
					}
					u.mu.Unlock()
				}
			}
		}
	}()
	return u
}

// waitSynced waits for the replica's cluster state, so that the first
// burst does not wait for it.
func (b *bed) waitSynced(r *replica) {
	b.eventually(30*time.Second, func() error {
		if !r.op.Cluster.Synced(context.Background()) {
			return fmt.Errorf("the cluster state has not synced")
		}
		return nil
	})
}

// burst creates burstPods web pods at once, as a Deployment scaled up would
// (but without its controller's pace), and waits until they all run.
func (b *bed) burst(name string) {
	ctx := context.Background()
	tmpl := webDeployment().Spec.Template
	for i := range burstPods {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: burstNS, Name: fmt.Sprintf("%s-%02d", name, i), Labels: map[string]string{"app": "burst"}},
			Spec:       *tmpl.Spec.DeepCopy(),
		}
		if err := b.Admin.Create(ctx, pod); err != nil {
			b.t.Fatal(err)
		}
	}
	b.eventually(2*time.Minute, b.allRunning(burstNS, b.burstsCreated()))
}

func (b *bed) burstsCreated() int {
	var pods corev1.PodList
	if err := b.Admin.List(context.Background(), &pods, client.InNamespace(burstNS)); err != nil {
		b.t.Fatal(err)
	}
	return len(pods.Items)
}

// burstMeasures are the benchmark's latencies and the pods it left out.
type burstMeasures struct {
	fromWatch, fromTransition []time.Duration
	boundAtOnce, joined       int
}

// measure pairs each pod with the CreateFleet of the claim it was first
// nominated to, through the claim's instance and its client token.
func (m *burstMeasures) measure(b *bed, seen *unschedulableTimes, fleets *fleetTimes) {
	var nominated map[string]string
	b.eventually(30*time.Second, func() error { // events are written asynchronously
		nominated = b.firstNominations(burstNS)
		for name := range seen.all() {
			if _, ok := nominated[name]; !ok {
				return fmt.Errorf("pod %s, unschedulable, has no Nominated event", name)
			}
		}
		return nil
	})
	tokens := map[string]string{} // nodeclaim -> client token of its instance
	for _, in := range b.Emulator.Instances() {
		tokens[in.Tags[v1alpha1.LabelNodeClaim]] = in.ClientToken
	}
	var pods corev1.PodList
	if err := b.Admin.List(context.Background(), &pods, client.InNamespace(burstNS)); err != nil {
		b.t.Fatal(err)
	}
	for _, p := range pods.Items {
		u, ok := seen.get(p.Name)
		if !ok {
			m.boundAtOnce++
			continue
		}
		fleet, ok := fleets.get(tokens[nominated[p.Name]])
		if !ok || fleet.Before(u.seen) {
			m.joined++
			continue
		}
		m.fromWatch = append(m.fromWatch, fleet.Sub(u.seen))
		m.fromTransition = append(m.fromTransition, fleet.Sub(u.transition))
	}
}

// firstNominations returns pod -> the NodeClaim its first Nominated event
// names ("" when it names a node).
func (b *bed) firstNominations(ns string) map[string]string {
	var list eventsv1.EventList
	if err := b.Admin.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		b.t.Fatal(err)
	}
	first := map[string]eventsv1.Event{}
	for _, e := range list.Items {
		if e.Reason != "Nominated" || e.Regarding.Kind != "Pod" {
			continue
		}
		if f, ok := first[e.Regarding.Name]; !ok || e.EventTime.Before(&f.EventTime) {
			first[e.Regarding.Name] = e
		}
	}
	out := map[string]string{}
	for pod, e := range first {
		if e.Related != nil && e.Related.Kind == "NodeClaim" {
			out[pod] = e.Related.Name
		} else {
			out[pod] = ""
		}
	}
	return out
}
