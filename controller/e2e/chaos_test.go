package e2e_test

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
	"github.com/stowage-dev/stowage/controller/nodeclaim/garbagecollection"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testbed"
)

var (
	chaosLong = flag.Bool("chaos.long", false, "run the long chaos soak (make soak): twice the pods, four times the kills")
	chaosSeed = flag.Int64("chaos.seed", 0, "seed of the chaos soak's kills and faults; when 0, the short soak's fixed seed, or the clock with -chaos.long")
	chaosICE  = flag.Float64("chaos.ice", -1, "rate of CreateFleet calls that find no capacity at all; when negative, the version's own")
)

const chaosNS = "chaos"

// chaosSize is one version of the soak: the pods of each workload at the
// peak, and how many times the scale-up and drain cycle runs.
type chaosSize struct {
	name               string
	web, onDemand, gpu int32
	cycles             int
	// ice is the rate of CreateFleet calls that find no capacity at all.
	ice float64
}

// The short version leaves out fleets that find no capacity at all: such a
// claim is kept and retried (controller/nodeclaim/lifecycle/launch.go) until
// the shortage memory lets it ask again, a minute or two with the retry
// backoff, instead of being deleted at once so that the next batch picks
// other offerings (issue 9), which takes the short version past 3 minutes.
// Raise it with -chaos.ice once that is fixed.
var (
	chaosShort = chaosSize{name: "soak", web: 150, onDemand: 40, gpu: 4, cycles: 1}
	chaosLongs = chaosSize{name: "soak-long", web: 320, onDemand: 70, gpu: 8, cycles: 4, ice: 0.05}
)

// faultPlan is what the emulator does to Stowage's EC2 calls during the
// soak: throttles and server errors on every call, fleets that find no
// capacity or only part of it, slow DescribeInstances.
func faultPlan(seed int64, ice float64) awsemu.FaultPlan {
	return awsemu.FaultPlan{Seed: seed, Rules: []awsemu.Fault{
		{Kind: awsemu.FaultThrottle, Probability: 0.05},
		{Kind: awsemu.FaultServerError, Probability: 0.02},
		{Kind: awsemu.FaultUnavailable, Probability: 0.02},
		{Action: "CreateFleet", Kind: awsemu.FaultInsufficientCapacity, Probability: ice},
		{Action: "CreateFleet", Kind: awsemu.FaultPartial, Probability: 0.10},
		{Action: "DescribeInstances", Kind: awsemu.FaultLatency, Delay: 2 * time.Second, Probability: 0.2},
	}}
}

// TestChaosSoak scales a few hundred pods across the seed's pools
// (examples/2am-spike: web on spot then on-demand, on-demand only web pods,
// GPU pods on the tainted pool) in steps, then drains some of their nodes,
// while the leader of two in-process replicas is killed, crash-like, at a
// point of its work each round (mid-batch, after a launch, instead of a
// status write, mid-drain, or any time) and the emulator injects EC2 faults
// from a seeded plan; each cycle also interrupts two spot nodes with pods.
// Every pod must end Running on a Ready claim, no claim may launch twice, no
// pod may still be on an interrupted instance when it terminates (unless its
// grace outlasts the notice), and once everything is deleted no instance may
// stay.
// -chaos.long runs the long version (make soak).
func TestChaosSoak(t *testing.T) {
	size, seed := chaosShort, int64(3)
	if *chaosLong {
		size, seed = chaosLongs, time.Now().UnixNano()%1_000_000
	}
	if *chaosSeed != 0 {
		seed = *chaosSeed
	}
	if *chaosICE >= 0 {
		size.ice = *chaosICE
	}
	t.Logf("chaos %s, seed %d (-chaos.seed=%d to repeat)", size.name, seed, seed)
	started := time.Now()
	b := startBed(t, testbed.Options{InstanceTypes: seedCatalogue()})
	pools, err := b.SeedPools("../../" + testbed.SeedFile)
	if err != nil {
		t.Fatal(err)
	}
	b.create(pools...)
	b.Emulator.SetFaultPlan(faultPlan(seed, size.ice))
	c := newChaos(b, seed)
	c.ix = b.watchInterruptions()
	t.Logf("%4.0fs bed up", time.Since(started).Seconds())
	b.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: chaosNS}}, chaosWeb("web", false), chaosWeb("web-on-demand", true), chaosGPU())
	for i, rd := range c.rounds(size) {
		c.ensure()
		rd.act()
		got := c.killWithin(rd.point, 20*time.Second)
		t.Logf("%4.0fs round %d: %s; killed %s (armed %s)", time.Since(started).Seconds(), i+1, rd.what, orNone(string(got)), rd.point)
	}
	c.ensure()
	total := int(size.web + size.onDemand + size.gpu)
	running, stranded := b.chaosSettle(total, c.topUp)
	t.Logf("%4.0fs settled: %d of %d pods running, %d claims stranded", time.Since(started).Seconds(), running, total, stranded)
	if running != total || stranded > 0 {
		b.describeUnsettled(t)
	}
	interrupted, lost := c.ix.settled()
	t.Logf("%4.0fs %d interrupted instances terminated, pods left on them: %v", time.Since(started).Seconds(), interrupted, lost)
	duplicates := b.duplicateLaunches()
	claims, _ := b.claims()
	b.chaosTeardown()
	t.Logf("%4.0fs torn down", time.Since(started).Seconds())
	leaked := b.leakedInstances()
	faults := b.Emulator.FaultsInjected()
	c.replicas() // notes the leases lost since the last look
	t.Logf("kills %v; leases lost %v; faults %v; %d nodeclaims once settled; %.0fs", c.kills, c.leasesLost, faults, len(claims), time.Since(started).Seconds())
	figures := fmt.Sprintf("chaos=%s kills=%d faults=%d leaked_instances=%d duplicate_launches=%d pods_running=%d/%d stranded=%d interruptions=%d pods_lost=%d seed=%d nodeclaims=%d wall_seconds=%.0f",
		size.name, len(c.kills), sum(faults), len(leaked), len(duplicates), running, total, stranded, interrupted, len(lost), seed, len(claims), time.Since(started).Seconds())
	if len(leaked) > 0 || len(duplicates) > 0 || running != total || stranded > 0 || len(c.kills) == 0 || sum(faults) == 0 || interrupted == 0 || len(lost) > 0 {
		t.Fatalf("the soak broke: %s\nleaked %v, launched twice %v, pods on interrupted instances at their end %v; every replica's logs: %s",
			figures, leaked, duplicates, lost, keepLogs(seed))
	}
	fmt.Println("BENCH " + figures)
	noForbiddenRequests(t)
}

func orNone(s string) string {
	if s == "" {
		return "none (no leader)"
	}
	return s
}

func sum(m map[awsemu.FaultKind]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// round is one step of the soak: a change to the workloads, and the point
// the leader is killed at while it handles it.
type round struct {
	what  string
	point killPoint
	act   func()
}

// rounds are the soak's steps: per cycle, the Deployments scaled up in four
// steps, then two drains of three nodes; each step's kill point drawn from
// those its work reaches.
func (c *chaos) rounds(size chaosSize) []round {
	var out []round
	scalePoints := []killPoint{killMidBatch, killAfterLaunch, killMidStatus, killAnytime}
	drainPoints := []killPoint{killMidDrain, killMidDrain, killAnytime}
	for cycle := range size.cycles {
		for step := int32(1); step <= 4; step++ {
			web := size.web * step / 4
			point := scalePoints[step-1]
			if cycle > 0 {
				point = scalePoints[c.rng.IntN(len(scalePoints))]
			}
			out = append(out, round{what: fmt.Sprintf("web at %d", web), point: point, act: func() {
				c.b.scale(chaosNS, "web", web)
				if step >= 3 {
					c.b.scale(chaosNS, "web-on-demand", size.onDemand)
					c.b.scale(chaosNS, "vllm", size.gpu)
				}
			}})
			if step == 2 {
				out = append(out, round{what: "interrupt 2 spot nodes", point: killAnytime, act: func() { c.ix.interrupt(2) }})
			}
		}
		for range 2 {
			out = append(out, round{what: "drain 3 nodes", point: drainPoints[c.rng.IntN(len(drainPoints))], act: func() { c.drain(3) }})
		}
	}
	return out
}

// topUp starts replicas until two are alive.
func (c *chaos) topUp() {
	for c.replicas() < 2 {
		c.startReplica()
	}
}

// ensure keeps two replicas alive and waits for one to lead.
func (c *chaos) ensure() {
	c.topUp()
	c.b.eventually(60*time.Second, func() error {
		if c.leader() == nil {
			return fmt.Errorf("no replica leads")
		}
		return nil
	})
}

// chaosSettle waits for every pod to run on a Ready claim, calling keep at
// every look, and returns the pods running and the claims stranded (neither
// Ready nor being deleted) when that holds or the wait ends.
func (b *bed) chaosSettle(want int, keep func()) (running, stranded int) {
	start := time.Now()
	report := start.Add(30 * time.Second)
	// The wait's end is no error: the caller judges what it returns.
	_ = wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, 3*time.Minute, true, func(context.Context) (bool, error) {
		keep()
		running, stranded = b.chaosState()
		if time.Now().After(report) {
			report = report.Add(30 * time.Second)
			b.t.Logf("settling for %.0fs: %d of %d pods running; claims not Ready: %v", time.Since(start).Seconds(), running, want, b.unreadyClaims())
		}
		return (running == want && stranded == 0) || b.Err() != nil, nil
	})
	return running, stranded
}

// unreadyClaims counts the claims not Ready and not being deleted, by the
// reason of their first condition that is not True.
func (b *bed) unreadyClaims() map[string]int {
	claims, _ := b.claims()
	out := map[string]int{}
	for _, nc := range claims {
		if nc.DeletionTimestamp != nil || nodeclaim.IsTrue(&nc, v1alpha1.ConditionReady) {
			continue
		}
		reason := "no conditions"
		for _, c := range nc.Status.Conditions {
			if c.Status != metav1.ConditionTrue {
				reason = c.Type + "=" + c.Reason
				break
			}
		}
		out[reason]++
	}
	return out
}

func (b *bed) chaosState() (running, stranded int) {
	var pods corev1.PodList
	if err := b.Admin.List(context.Background(), &pods, client.InNamespace(chaosNS)); err != nil {
		return 0, -1
	}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			running++
		}
	}
	claims, err := b.claims()
	if err != nil {
		return running, -1
	}
	for _, nc := range claims {
		if nc.DeletionTimestamp == nil && !nodeclaim.IsTrue(&nc, v1alpha1.ConditionReady) {
			stranded++
		}
	}
	return running, stranded
}

// duplicateLaunches names the claims that launched more than one instance.
func (b *bed) duplicateLaunches() []string {
	var out []string
	for name, ins := range b.instancesByClaim() {
		if len(ins) > 1 {
			out = append(out, fmt.Sprintf("%s (%d instances)", name, len(ins)))
		}
	}
	slices.Sort(out)
	return out
}

// chaosTeardown deletes the Deployments and, once their pods are gone, every
// claim, and waits for the claims and Nodes to go. Claims deleted while pods
// still run would get replacements launched after the list (as
// deleteEverything explains), so each round deletes what is left.
func (b *bed) chaosTeardown() {
	ctx := context.Background()
	for _, name := range []string{"web", "web-on-demand", "vllm"} {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: chaosNS, Name: name}}
		if err := b.Admin.Delete(ctx, d, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			b.t.Fatal(err)
		}
	}
	b.eventually(2*time.Minute, func() error { return b.noPods(chaosNS) })
	b.eventually(2*time.Minute, func() error {
		left, err := b.claims()
		for i := range left {
			if left[i].DeletionTimestamp == nil {
				if derr := b.Admin.Delete(ctx, &left[i]); client.IgnoreNotFound(derr) != nil {
					return derr
				}
			}
		}
		var nodes corev1.NodeList
		if err == nil {
			err = b.Admin.List(ctx, &nodes)
		}
		if err != nil || len(left)+len(nodes.Items) > 0 {
			return fmt.Errorf("%d nodeclaims and %d nodes left (%v)", len(left), len(nodes.Items), err)
		}
		return nil
	})
}

// leakedInstances waits, as long as the garbage collector may take, for
// every instance to terminate, and returns those still pending or running.
func (b *bed) leakedInstances() []string {
	leaked := map[string]string{}
	_ = wait.PollUntilContextTimeout(context.Background(), time.Second,
		garbagecollection.DefaultInterval+garbagecollection.DefaultGracePeriod+30*time.Second, true, func(context.Context) (bool, error) {
			clear(leaked)
			for _, in := range b.Emulator.Instances() {
				if live(in) {
					leaked[in.ID] = in.Tags[v1alpha1.LabelNodeClaim]
				}
			}
			return len(leaked) == 0, nil
		})
	var out []string
	for _, id := range slices.Sorted(maps.Keys(leaked)) {
		out = append(out, id+" of nodeclaim "+leaked[id])
	}
	return out
}

// describeUnsettled logs the claims not Ready and the pods not Running.
func (b *bed) describeUnsettled(t *testing.T) {
	claims, _ := b.claims()
	for _, nc := range claims {
		if nc.DeletionTimestamp == nil && !nodeclaim.IsTrue(&nc, v1alpha1.ConditionReady) {
			t.Logf("nodeclaim %s (created %s, provider id %q, node %q): %v", nc.Name, nc.CreationTimestamp.Format(time.TimeOnly),
				nc.Status.ProviderID, nc.Status.NodeName, nc.Status.Conditions)
		}
	}
	var pods corev1.PodList
	_ = b.Admin.List(context.Background(), &pods, client.InNamespace(chaosNS))
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning {
			t.Logf("pod %s (created %s) on %q: %s %v", p.Name, p.CreationTimestamp.Format(time.TimeOnly), p.Spec.NodeName, p.Status.Phase, p.Status.Conditions)
		}
	}
	for name, ins := range b.instancesByClaim() {
		var states []string
		for _, in := range ins {
			states = append(states, in.ID+" "+in.State)
		}
		t.Logf("nodeclaim %q: instances %v", name, states)
	}
}

// keepLogs writes every replica's logs to a file for a failed soak, and names it.
func keepLogs(seed int64) string {
	path := filepath.Join(os.TempDir(), fmt.Sprintf("stowage-chaos-%d.log", seed))
	if err := os.WriteFile(path, []byte(logs.String()), 0o600); err != nil {
		return err.Error()
	}
	return path
}
