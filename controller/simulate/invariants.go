package simulate

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/nodeclaim/garbagecollection"
	"github.com/stowage-dev/stowage/controller/nodeclaim/lifecycle"
	"github.com/stowage-dev/stowage/controller/provisioning"
	"github.com/stowage-dev/stowage/controller/scheduling"
	"github.com/stowage-dev/stowage/controller/simulate/report"
	"github.com/stowage-dev/stowage/lambda/messages/spotinterruption"
)

// Invariant names a property every Stowage run keeps, whatever the scenario.
type Invariant string

// The invariants RunChecked checks.
const (
	// InvariantPodReason: a pod not bound for longer than Bounds.Reason is
	// nominated (its nomination still live) or was last told by the
	// provisioner why it cannot be provisioned (FailedScheduling) or that it
	// waits for the next batch (WaitingForNextBatch).
	InvariantPodReason Invariant = "pod-reason"
	// InvariantPodWait: no pod stays unbound longer than Bounds.Wait while it is
	// launchable (launchable.go) the whole time.
	InvariantPodWait Invariant = "pod-wait"
	// InvariantPoolLimit: the capacity of a pool's pending and running
	// instances never exceeds its limits, at any instant.
	InvariantPoolLimit Invariant = "pool-limit"
	// InvariantInstanceLeak: no pending or running instance stays without a
	// NodeClaim that owns it (its claim tag names a claim that exists and whose
	// provider id is this instance, or that has none yet) for longer than
	// Bounds.Orphan, and none is left at the end.
	InvariantInstanceLeak Invariant = "instance-leak"
	// InvariantDuplicate: no NodeClaim launches two instances, and no pod is
	// nominated to a new NodeClaim while the one it was nominated to before is
	// still on its way (exists, not deleted, no Node yet).
	InvariantDuplicate Invariant = "duplicate-decision"
	// InvariantJobPods: a Job keeps min(parallelism, completions left) pods
	// alive: a completed or lost pod is replaced within Bounds.JobPods.
	InvariantJobPods Invariant = "job-pods"
	// InvariantPodLost: no pod is on an instance when the instance terminates
	// after an interruption notice, unless its termination grace period is
	// longer than the notice, or it tolerates the disrupted or the
	// interrupted taint: a drain leaves such a pod (Karpenter's rule: it would
	// come straight back) and kube-scheduler may bind it there after the
	// notice. Every other pod was evicted in time, its grace honoured.
	InvariantPodLost Invariant = "pod-lost"
	// InvariantEvictedRuns: a pod evicted by a voluntary disruption
	// (consolidation, emptiness, drift, expiry) is Running again, as the pod
	// its controller creates in its stead, within Bounds.Restart: the
	// disruption evicts only pods that have a home now.
	InvariantEvictedRuns Invariant = "evicted-runs"
	// InvariantPDB: no Ready pod leaves a node a voluntary disruption takes
	// away (consolidation, emptiness, drift, return, expiry) while its
	// PodDisruptionBudget has no disruption to spare: counted afresh from the
	// pods once it is gone, by the simulator's own disruption controller
	// (pdb.go), the budget keeps the healthy pods it desires. The simulated
	// Eviction API refuses such an eviction; this catches any other way out
	// (a delete, a node terminated under its pods, an eviction counted on a
	// stale status).
	InvariantPDB Invariant = "pdb"
	// InvariantAllocatable: every Node registers the allocatable its claim
	// was planned with: the simulator's kubelet computes it from the user
	// data by nodeadm's or Bottlerocket's rules (internal/nodeboot), the
	// solver by its own (controller/catalogue), and an AllocatableMismatch
	// event says they disagree.
	InvariantAllocatable Invariant = "allocatable"
	// InvariantDeterminism: the same scenario and seed give the same report,
	// byte for byte (checked by running twice; see scenariogen).
	InvariantDeterminism Invariant = "determinism"
)

// Violation is one breach of an invariant.
type Violation struct {
	Invariant Invariant
	// At is the virtual time since the start.
	At time.Duration
	// Object names the pod, pool, instance, claim or workload.
	Object  string
	Message string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s at %s: %s: %s", v.Invariant, v.At, v.Object, v.Message)
}

// Bounds are the times the invariants allow.
type Bounds struct {
	// Wait is the batch window's longest, plus the slowest boot the scenario
	// allows, plus a minute.
	Wait time.Duration
	// Reason is how long a pending pod may go without a reason: the batch
	// window's longest plus 10 s.
	Reason time.Duration
	// Orphan is how long an instance may stay unowned: the garbage
	// collector's interval and grace period, plus 30 s.
	Orphan time.Duration
	// JobPods is how long a Job may run short of pods: a few seconds, as the
	// Job controller replaces a pod as soon as it completes or is lost.
	JobPods time.Duration
	// Restart is how long after its eviction by a voluntary disruption a pod
	// may wait to run again: the slowest pod start-up plus the batch window's
	// longest.
	Restart time.Duration
}

// defaultBoot is the boot time when the scenario gives none (world.bootTime).
const defaultBootMax = 120 * time.Second

// BoundsFor derives the bounds from the scenario's boot times.
func BoundsFor(s *Scenario) Bounds {
	slowest := time.Duration(0)
	for _, r := range s.Spec.Boot {
		slowest = max(slowest, r.Max.Duration)
	}
	if _, ok := s.Spec.Boot["default"]; !ok {
		slowest = max(slowest, defaultBootMax)
	}
	return Bounds{
		Wait:    provisioning.DefaultBatchMaxDuration + slowest + time.Minute,
		Reason:  provisioning.DefaultBatchMaxDuration + 10*time.Second,
		Orphan:  garbagecollection.DefaultInterval + garbagecollection.DefaultGracePeriod + 30*time.Second,
		JobPods: 5 * time.Second,
		Restart: s.Spec.PodStartup.Max.Duration + provisioning.DefaultBatchMaxDuration,
	}
}

// maxViolations caps what one run keeps: the first ones tell the story.
const maxViolations = 50

// RunChecked replays the scenario with Stowage alone (no baseline) and checks
// every invariant at every instant of the virtual clock, and at the end. The
// violations come in the order they happened, at most one per invariant and
// object, at most maxViolations.
func RunChecked(ctx context.Context, s *Scenario, opts Options) (*report.Report, []Violation, error) {
	c := newInvariantChecker(s)
	opts.CompareCAS, opts.observer = false, c
	rep, err := Run(ctx, s, opts)
	return rep, c.violations, err
}

// invariantChecker is the observer that checks the invariants.
type invariantChecker struct {
	bounds     Bounds
	launch     *launchability
	violations []Violation
	// invariant + object -> already reported
	reported map[string]bool
	// pod key -> what the provisioner last published about it
	said map[string]podWord
	// claim name -> when a pod was last nominated to it
	claimNominated map[string]time.Duration
	// pod key -> since when it has gone without a reason
	reasonless map[string]time.Time
	// job workload -> since when it has run short of pods
	jobShort map[*workloadState]time.Time
	cloud    cloudWatch
}

// podWord is the provisioner's last word on a pod: a nomination (to a
// NodeClaim or a node) or a reason it cannot be provisioned.
type podWord struct {
	claim, node, failed string
	// at is when it was said
	at time.Duration
}

func newInvariantChecker(s *Scenario) *invariantChecker {
	return &invariantChecker{bounds: BoundsFor(s), launch: newLaunchability(s), reported: map[string]bool{},
		said: map[string]podWord{}, claimNominated: map[string]time.Duration{}, reasonless: map[string]time.Time{}, jobShort: map[*workloadState]time.Time{},
		cloud: newCloudWatch()}
}

func (c *invariantChecker) report(w *world, inv Invariant, object, format string, args ...any) {
	id := string(inv) + " " + object
	if c.reported[id] || len(c.violations) >= maxViolations {
		return
	}
	c.reported[id] = true
	c.violations = append(c.violations, Violation{Invariant: inv, At: w.elapsed(), Object: object, Message: fmt.Sprintf(format, args...)})
}

func (c *invariantChecker) instant(w *world) {
	c.launch.startInstant(w)
	c.checkPods(w)
	c.checkJobs(w)
	c.checkReplacements(w)
	c.cloud.check(c, w, false)
}

func (c *invariantChecker) end(w *world) { c.cloud.check(c, w, true) }

// lost checks a pod that went down with its instance: after a notice, only a
// pod whose grace the notice could not honour may.
func (c *invariantChecker) lost(w *world, sp *simPod, instance string) {
	notice, ok := w.out.noticeOf(instance)
	if !ok {
		return
	}
	if podGrace(sp.pod) > spotinterruption.Notice || staysOnInterrupted(sp.pod) {
		return
	}
	c.report(w, InvariantPodLost, "pod "+sp.key, "still on instance %s (node %s) when it terminated, %s after its interruption notice; bound at %s, %s",
		instance, sp.node, w.clk.Now().Sub(notice), sp.bound.Sub(epoch), c.describe(w, sp))
}

// staysOnInterrupted reports whether the pod tolerates the taint of a
// draining or of an interrupted node.
func staysOnInterrupted(p *corev1.Pod) bool {
	interrupted := corev1.Taint{Key: v1alpha1.TaintKeyInterrupted, Value: v1alpha1.InterruptionKindSpotInterruption, Effect: corev1.TaintEffectNoSchedule}
	return scheduling.Tolerates([]corev1.Taint{v1alpha1.DisruptedNoScheduleTaint}, p.Spec.Tolerations) == nil ||
		scheduling.Tolerates([]corev1.Taint{interrupted}, p.Spec.Tolerations) == nil
}

// podGrace is the pod's termination grace period, 30 s when it sets none.
func podGrace(p *corev1.Pod) time.Duration {
	if s := p.Spec.TerminationGracePeriodSeconds; s != nil {
		return time.Duration(*s) * time.Second
	}
	return corev1.DefaultTerminationGracePeriodSeconds * time.Second
}

func (c *invariantChecker) warned(w *world, reason, object, note string) {
	if reason == lifecycle.ReasonAllocatableMismatch {
		c.report(w, InvariantAllocatable, "nodeclaim "+object, "%s", note)
	}
}

// published keeps the provisioner's last word per pod, and checks that a
// pod nominated to a new claim was not on its way to another.
func (c *invariantChecker) published(w *world, evs []provisioning.Event) {
	for _, ev := range evs {
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok {
			continue
		}
		key := pod.Namespace + "/" + pod.Name
		switch ev.Reason {
		case provisioning.ReasonNominated:
			claim, isClaim := ev.Related.(*v1alpha1.NodeClaim)
			if !isClaim {
				c.said[key] = podWord{node: ev.Related.GetName(), at: w.elapsed()}
				continue
			}
			c.checkRenomination(w, key, claim.Name)
			c.said[key] = podWord{claim: claim.Name, at: w.elapsed()}
			c.claimNominated[claim.Name] = w.elapsed()
		case provisioning.ReasonFailedScheduling, provisioning.ReasonWaitingForBatch:
			c.said[key] = podWord{failed: ev.Message, at: w.elapsed()}
		}
	}
}

// checkPods checks every unbound pod's reason and wait. Bound pods are
// forgotten: what they waited is behind them.
func (c *invariantChecker) checkPods(w *world) {
	if w.unbound == 0 {
		clear(c.reasonless)
		return
	}
	now := w.clk.Now()
	waiting := map[string]bool{}
	for _, sp := range w.sortedPods() {
		if !sp.bound.IsZero() {
			continue
		}
		waiting[sp.key] = true
		c.checkReason(w, sp, now)
		if since, ok := c.launch.launchableSince(w, sp); ok && now.Sub(since) > c.bounds.Wait {
			c.report(w, InvariantPodWait, "pod "+sp.key, "unbound for %s, launchable (%s) since %s (bound %s)%s; %s",
				w.clk.Since(sp.created), c.launch.describeFit(sp.workload), since.Sub(epoch), c.bounds.Wait, c.stale(sp, since), c.describe(w, sp))
		}
	}
	for key := range c.reasonless {
		if !waiting[key] {
			delete(c.reasonless, key)
		}
	}
}

func (c *invariantChecker) checkReason(w *world, sp *simPod, now time.Time) {
	word, spoken := c.said[sp.key]
	if spoken && (word.failed != "" || w.cluster.IsNominated(sp.pod)) {
		delete(c.reasonless, sp.key)
		return
	}
	since, ok := c.reasonless[sp.key]
	if !ok {
		c.reasonless[sp.key] = now
		return
	}
	if now.Sub(since) > c.bounds.Reason {
		c.report(w, InvariantPodReason, "pod "+sp.key, "unbound for %s, %s without a live nomination or a FailedScheduling reason; %s",
			w.clk.Since(sp.created), now.Sub(since), c.describe(w, sp))
	}
}

// stale notes that the provisioner has said nothing of the pod since it
// became launchable: no batch has looked at it since.
func (c *invariantChecker) stale(sp *simPod, since time.Time) string {
	if word, ok := c.said[sp.key]; !ok || epoch.Add(word.at).Before(since) {
		return ", and no batch has looked at it since"
	}
	return ""
}

// describe says what the provisioner last said of a pod, and what
// kube-scheduler's condition says.
func (c *invariantChecker) describe(w *world, sp *simPod) string {
	word := c.said[sp.key]
	said := "the provisioner said nothing"
	switch {
	case word.claim != "":
		said = fmt.Sprintf("nominated at %s to nodeclaim %s", word.at, word.claim)
	case word.node != "":
		said = fmt.Sprintf("nominated at %s to node %s", word.at, word.node)
	case word.failed != "":
		said = fmt.Sprintf("told at %s: %s", word.at, word.failed)
	}
	for _, cond := range sp.pod.Status.Conditions {
		if cond.Type == corev1.PodScheduled {
			return fmt.Sprintf("%s; kube-scheduler: %s %s", said, cond.Reason, cond.Message)
		}
	}
	return said
}

// checkReplacements checks that every pod replacing one a voluntary
// disruption evicted runs within the restart bound of the eviction.
func (c *invariantChecker) checkReplacements(w *world) {
	now := w.clk.Now()
	for _, sp := range w.sortedPods() {
		if sp.replaces.IsZero() || sp.running || now.Sub(sp.replaces) <= c.bounds.Restart {
			continue
		}
		where := "still pending"
		if !sp.bound.IsZero() {
			where = "bound to " + sp.node + " at " + sp.bound.Sub(epoch).String()
		}
		c.report(w, InvariantEvictedRuns, "pod "+sp.key, "replaces a pod evicted by a voluntary disruption at %s, and is not Running %s later (bound %s): %s; %s",
			sp.replaces.Sub(epoch), now.Sub(sp.replaces), c.bounds.Restart, where, c.describe(w, sp))
	}
}

// checkJobs checks every started Job keeps as many pods as it should.
func (c *invariantChecker) checkJobs(w *world) {
	t, now := w.elapsed(), w.clk.Now()
	for _, ws := range w.workloads {
		if ws.spec.Job == "" || t < ws.spec.At.Duration {
			continue
		}
		want := int(min(ws.parallelism, ws.completions-ws.completed))
		since, short := c.jobShort[ws]
		switch {
		case len(ws.live) < want && !short:
			c.jobShort[ws] = now
		case short && now.Sub(since) > c.bounds.JobPods:
			// Also when the shortage has just ended: no instant may have
			// come between its start and its end.
			c.report(w, InvariantJobPods, "job "+ws.namespace+"/"+ws.name, "ran short of pods for %s (now %d alive, want %d; parallelism %d, %d of %d completed, %d pods created)",
				now.Sub(since), len(ws.live), want, ws.parallelism, ws.completed, ws.completions, ws.created)
		}
		if len(ws.live) >= want {
			delete(c.jobShort, ws)
		}
	}
}

// checkRenomination reports a pod nominated to claim, new in this batch,
// while the claim it was last nominated to is still on its way and the pod
// has not bound anywhere since.
func (c *invariantChecker) checkRenomination(w *world, pod, claim string) {
	if !c.cloud.newClaim(w, claim) {
		return
	}
	word := c.said[pod]
	prev := word.claim
	if prev == "" || prev == claim {
		return
	}
	if sp, ok := w.pods[pod]; ok && !sp.bound.IsZero() && !sp.bound.Before(epoch.Add(word.at)) &&
		epoch.Add(c.claimNominated[prev]).After(sp.bound) {
		// It bound elsewhere since (kube-scheduler does not follow Stowage's
		// nominations), other pods were nominated to its room, and now its
		// node is leaving: the room it needs is new.
		return
	}
	if nc, ok := w.claim(prev); ok && nc.DeletionTimestamp == nil && nc.Status.NodeName == "" {
		c.report(w, InvariantDuplicate, "pod "+pod, "nominated to new nodeclaim %s while nodeclaim %s, which it was nominated to, is still launching (provider id %q)",
			claim, prev, nc.Status.ProviderID)
	}
}
