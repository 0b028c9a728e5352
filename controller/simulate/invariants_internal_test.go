package simulate

import (
	"fmt"
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/provisioning"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

// calm is a scenario that breaks no invariant: six pods of 1 CPU on a pool
// of c6i.xlarge capped at 16 CPUs, then none.
const calm = `
apiVersion: simulate.stowage.dev/v1alpha1
kind: Scenario
metadata: {name: calm}
spec:
  duration: 20m
  seed: 11
  workloads:
    - deployment: web
      replicas: [{at: 1m, count: 6}, {at: 15m, count: 0}]
---
apiVersion: stowage.dev/v1alpha1
kind: NodeClass
metadata: {name: web}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: NodeRole
  subnetSelectorTerms: [{tags: {stowage.dev/discovery: calm}}]
  securityGroupSelectorTerms: [{tags: {stowage.dev/discovery: calm}}]
---
apiVersion: stowage.dev/v1alpha1
kind: NodePool
metadata: {name: web}
spec:
  limits: {cpu: "16"}
  template:
    spec:
      nodeClassRef: {group: stowage.dev, kind: NodeClass, name: web}
      requirements:
        - {key: node.kubernetes.io/instance-type, operator: In, values: [c6i.xlarge]}
        - {key: stowage.dev/capacity-type, operator: In, values: [on-demand]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: registry.example.com/web:1
          resources: {requests: {cpu: "1", memory: 1Gi}}
`

// sabotage runs the checker after breaking something at every instant.
type sabotage struct {
	check  *invariantChecker
	break_ func(w *world, c *invariantChecker)
}

func (s *sabotage) instant(w *world) { s.break_(w, s.check); s.check.instant(w) }
func (s *sabotage) published(w *world, evs []provisioning.Event) {
	s.check.published(w, evs)
}
func (s *sabotage) warned(w *world, reason, object, note string) {
	s.check.warned(w, reason, object, note)
}
func (s *sabotage) end(w *world) { s.check.end(w) }
func (s *sabotage) lost(w *world, sp *simPod, instance string) {
	s.check.lost(w, sp, instance)
}
func (s *sabotage) left(w *world, pod *corev1.Pod) { s.check.left(w, pod) }

// runBroken replays the scenario with Stowage, breaking it as break_ does,
// and returns what the invariants found.
func runBroken(t *testing.T, doc string, break_ func(w *world, c *invariantChecker)) []Violation {
	t.Helper()
	s, err := ReadScenario(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	c := newInvariantChecker(s)
	if _, err := Run(t.Context(), s, Options{observer: &sabotage{check: c, break_: break_}}); err != nil {
		t.Fatal(err)
	}
	return c.violations
}

// only fails unless every violation is of inv, and there is one.
func only(t *testing.T, vs []Violation, inv Invariant) {
	t.Helper()
	if len(vs) == 0 {
		t.Fatalf("no violation, want %s", inv)
	}
	for _, v := range vs {
		if v.Invariant != inv {
			t.Errorf("%s, want only %s", v, inv)
		}
	}
}

func TestACalmRunBreaksNoInvariant(t *testing.T) {
	for _, v := range runBroken(t, calm, func(*world, *invariantChecker) {}) {
		t.Errorf("%s", v)
	}
}

// launch starts instances of the type on the emulator behind Stowage's
// back, from the launch template and subnet of a live instance, tagged
// with tags (with its tags too when like is set): what a buggy launch would
// leave.
func launch(t *testing.T, w *world, n int, instanceType string, tags map[string]string, likeTags bool) {
	t.Helper()
	var like awsemu.Instance
	for _, in := range w.emu.Instances() {
		if live(in) {
			like = in
		}
	}
	if like.ID == "" {
		t.Fatal("no live instance to launch like")
	}
	if likeTags {
		tags = mergeTags(like.Tags, tags)
	}
	res, err := w.emu.CreateFleet(awsemu.FleetRequest{CapacityType: like.CapacityType, TotalTargetCapacity: n, OnDemandStrategy: "lowest-price",
		Overrides:    []awsemu.FleetOverride{{LaunchTemplateID: like.LaunchTemplate, InstanceType: instanceType, SubnetID: like.SubnetID}},
		InstanceTags: tags})
	if err != nil || len(res.Instances) == 0 {
		t.Fatalf("launching behind Stowage's back: %+v, %v", res, err)
	}
}

func mergeTags(sets ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, set := range sets {
		maps.Copy(out, set)
	}
	return out
}

// at runs f once, at the first instant at or after d.
func at(d time.Duration, f func(w *world, c *invariantChecker)) func(w *world, c *invariantChecker) {
	done := false
	return func(w *world, c *invariantChecker) {
		if !done && w.elapsed() >= d {
			done = true
			f(w, c)
		}
	}
}

func TestASecondInstanceForAClaimIsADuplicateLaunch(t *testing.T) {
	vs := runBroken(t, calm, at(5*time.Minute, func(w *world, _ *invariantChecker) {
		claim := w.storedClaims()[0]
		launch(t, w, 1, "c6i.xlarge", map[string]string{v1alpha1.LabelNodeClaim: claim.Name}, true)
	}))
	// The garbage collector terminates the second instance within its
	// interval and grace period: a duplicate, not a leak.
	only(t, vs, InvariantDuplicate)
}

func TestAnInstanceNoClaimOwnsIsALeak(t *testing.T) {
	// Without the cluster tag the garbage collector does not see it as
	// Stowage's, so it stays.
	vs := runBroken(t, calm, at(5*time.Minute, func(w *world, _ *invariantChecker) {
		launch(t, w, 1, "c6i.large", map[string]string{v1alpha1.LabelNodeClaim: "ghost"}, false)
	}))
	only(t, vs, InvariantInstanceLeak)
	if !strings.Contains(vs[0].Message, "ghost is gone") || vs[0].At < 5*time.Minute+BoundsFor(&Scenario{}).Orphan {
		t.Errorf("%s: want the leak named after its orphan bound", vs[0])
	}
}

func TestInstancesOverAPoolsLimitBreakIt(t *testing.T) {
	vs := runBroken(t, calm, at(5*time.Minute, func(w *world, _ *invariantChecker) {
		launch(t, w, 3, "c6i.2xlarge", map[string]string{v1alpha1.LabelNodePool: "web", v1alpha1.LabelNodeClaim: "ghost"}, false)
	}))
	var limit []Violation
	for _, v := range vs {
		if v.Invariant == InvariantPoolLimit {
			limit = append(limit, v)
		}
	}
	if len(limit) != 1 || limit[0].At != 5*time.Minute || !strings.Contains(limit[0].Message, "cpu") {
		t.Errorf("pool-limit violations %v, want one on cpu at 5m (%v in all)", limit, vs)
	}
}

func TestPodsThatStowageCannotSeeBreakTheReasonAndWaitInvariants(t *testing.T) {
	// kube-scheduler's verdict is wiped from every pending pod, so the
	// provisioner never takes them up, and says nothing of them.
	vs := runBroken(t, calm, func(w *world, _ *invariantChecker) {
		for _, sp := range w.sortedPods() {
			if !sp.bound.IsZero() {
				continue
			}
			pod := &corev1.Pod{}
			if err := w.kube.Get(t.Context(), client.ObjectKey{Namespace: sp.pod.Namespace, Name: sp.pod.Name}, pod); err != nil {
				t.Fatal(err)
			}
			if len(pod.Status.Conditions) > 0 {
				pod.Status.Conditions = nil
				if err := w.kube.Status().Update(t.Context(), pod); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
	kinds := map[Invariant]int{}
	for _, v := range vs {
		kinds[v.Invariant]++
	}
	if kinds[InvariantPodReason] != 6 || kinds[InvariantPodWait] != 6 || len(kinds) != 2 {
		t.Errorf("violations by invariant %v, want each of the 6 pods without a reason and waiting: %v", kinds, vs)
	}
}

func TestANominationToANewClaimWhileTheLastIsLaunchingIsADuplicateDecision(t *testing.T) {
	vs := runBroken(t, calm, func(w *world, c *invariantChecker) {
		for _, sp := range w.sortedPods() {
			word := c.said[sp.key]
			if nc, ok := w.claim(word.claim); ok && nc.Status.NodeName == "" && sp.bound.IsZero() {
				ghost := &v1alpha1.NodeClaim{}
				ghost.Name = fmt.Sprintf("ghost-%s", sp.pod.Name)
				c.published(w, []provisioning.Event{provisioning.NominatedEvent(sp.pod, ghost)})
				return
			}
		}
	})
	only(t, vs, InvariantDuplicate)
}

// TestAMispredictedAllocatableBreaksTheAllocatableInvariant: a claim
// launched with a pod more than its node's kubelet will allow is reported
// when its Node initializes, through the lifecycle controller's event.
func TestAMispredictedAllocatableBreaksTheAllocatableInvariant(t *testing.T) {
	vs := runBroken(t, calm, func(w *world, _ *invariantChecker) {
		for _, claim := range w.kube.mirror.objects[nodeClaimType] {
			nc := claim.(*v1alpha1.NodeClaim)
			if pods, ok := nc.Status.Allocatable[corev1.ResourcePods]; ok && nc.Status.NodeName == "" && nc.Annotations["sabotaged"] == "" {
				pods.Add(resource.MustParse("1"))
				nc.Status.Allocatable[corev1.ResourcePods] = pods
				nc.Annotations = map[string]string{"sabotaged": "true"}
			}
		}
	})
	only(t, vs, InvariantAllocatable)
	if !strings.Contains(vs[0].Message, "pods predicted") {
		t.Errorf("%s: want the pods' difference named", vs[0])
	}
}

func TestAJobShortOfPodsBreaksTheJobInvariant(t *testing.T) {
	doc := strings.Replace(calm, "    - deployment: web\n      replicas: [{at: 1m, count: 6}, {at: 15m, count: 0}]",
		"    - {job: web, at: 1m, runFor: 30m}", 1)
	doc = strings.Replace(doc, "apiVersion: apps/v1\nkind: Deployment", "apiVersion: batch/v1\nkind: Job", 1)
	doc = strings.Replace(doc, "  selector: {matchLabels: {app: web}}\n", "  parallelism: 3\n  completions: 3\n", 1)
	// From 5m on, each of the Job's pods is deleted as soon as it is made.
	vs := runBroken(t, doc, func(w *world, _ *invariantChecker) {
		if w.elapsed() < 5*time.Minute {
			return
		}
		for _, ws := range w.workloads {
			if len(ws.live) > 0 {
				if err := w.deletePod(t.Context(), ws.live[0]); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
	only(t, vs, InvariantJobPods)
}

// spotCalm is calm on spot capacity, with its oldest spot instance
// interrupted at 8m.
var spotCalm = strings.NewReplacer("values: [on-demand]", "values: [spot]",
	"replicas: [{at: 1m, count: 6}, {at: 15m, count: 0}]", "replicas: [{at: 1m, count: 6}, {at: 15m, count: 0}]\n  interruptions: {scripted: [{at: 8m}]}").Replace(calm)

// deaf drops every EventBridge event from the first instant on: no notice
// reaches the cluster, so nothing leaves the interrupted instance.
func deaf(w *world, _ *invariantChecker) {
	w.emu.SetEventSink(awsemu.SinkFunc(func(awsemu.Event) {}))
}

func TestPodsLeftOnAnInterruptedInstanceBreakThePodLostInvariant(t *testing.T) {
	if vs := runBroken(t, spotCalm, func(*world, *invariantChecker) {}); len(vs) > 0 {
		t.Fatalf("the interruption heard: %v, want no violation", vs)
	}
	var lost []Violation
	for _, v := range runBroken(t, spotCalm, deaf) {
		if v.Invariant == InvariantPodLost {
			lost = append(lost, v)
		}
	}
	if len(lost) == 0 || lost[0].At < 10*time.Minute || !strings.Contains(lost[0].Message, "2m0s after its interruption notice") {
		t.Errorf("pod-lost violations %v, want the pods of the instance interrupted at 8m, at 10m", lost)
	}
}

func TestAPodWhoseGraceOutlastsTheNoticeMayGoDownWithItsInstance(t *testing.T) {
	patient := strings.Replace(spotCalm, "      containers:", "      terminationGracePeriodSeconds: 180\n      containers:", 1)
	s, err := ReadScenario(strings.NewReader(patient))
	if err != nil {
		t.Fatal(err)
	}
	c := newInvariantChecker(s)
	rep, err := Run(t.Context(), s, Options{observer: &sabotage{check: c, break_: deaf}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Systems[0].PodsLost() == 0 {
		t.Fatal("no pod went down with its instance: the test shows nothing")
	}
	for _, v := range c.violations {
		if v.Invariant == InvariantPodLost {
			t.Errorf("%s: a pod whose grace outlasts the notice cannot leave in time", v)
		}
	}
}

func TestAnEvictedPodThatCannotRunAgainBreaksTheEvictedRunsInvariant(t *testing.T) {
	doc, err := os.ReadFile("testdata/scale-in-spread.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Every node is cordoned as the first consolidation drains its nodes:
	// the pods it evicts find nowhere to run.
	vs := runBroken(t, string(doc), at(20*time.Minute+50*time.Second, func(w *world, _ *invariantChecker) {
		for _, in := range w.sortedInstances() {
			node := &corev1.Node{}
			if in.node == "" || w.kube.Get(t.Context(), client.ObjectKey{Name: in.node}, node) != nil {
				continue
			}
			node.Spec.Unschedulable = true
			if err := w.kube.Update(t.Context(), node); err != nil {
				t.Fatal(err)
			}
		}
	}))
	var evicted []Violation
	for _, v := range vs {
		if v.Invariant == InvariantEvictedRuns {
			evicted = append(evicted, v)
		}
	}
	if len(evicted) == 0 || !strings.Contains(evicted[0].Message, "evicted by a voluntary disruption at 20m50s") {
		t.Errorf("evicted-runs violations %v, want the pods the consolidation at 20m50s evicted", evicted)
	}
}
