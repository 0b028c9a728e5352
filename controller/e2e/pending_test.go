package e2e_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/nodeclaim/lifecycle"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testbed"
)

// bootSettle bounds a wait that includes a realistic boot (60-120 s) on a
// busy shared machine.
const bootSettle = 6 * time.Minute

// onDemandPool is the e2e pool restricted to on-demand capacity and, when
// given, to the instance types listed.
func onDemandPool(name string, weight int32, types ...string) *v1alpha1.NodePool {
	np := nodePool()
	np.Name = name
	if weight > 0 {
		np.Spec.Weight = ptr.To(weight)
	}
	reqs := []v1alpha1.NodeSelectorRequirementWithMinValues{{Key: v1alpha1.LabelCapacityType, Operator: v1alpha1.OperatorIn,
		Values: []string{v1alpha1.CapacityTypeOnDemand}}}
	if len(types) > 0 {
		reqs = append(reqs, v1alpha1.NodeSelectorRequirementWithMinValues{Key: corev1.LabelInstanceTypeStable,
			Operator: v1alpha1.OperatorIn, Values: types})
	}
	np.Spec.Template.Spec.Requirements = reqs
	return np
}

// agent is a DaemonSet of ns whose pods request cpu and memory and tolerate
// nothing beyond what the DaemonSet controller adds; selector, when not nil,
// is its node selector.
func agent(ns, name, cpu, memory string, selector map[string]string) *appsv1.DaemonSet {
	labels := map[string]string{"app": name}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				NodeSelector: selector, TerminationGracePeriodSeconds: ptr.To[int64](0),
				Containers: []corev1.Container{{Name: "agent", Image: "registry.invalid/" + name + ":1", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}}}},
			}},
		},
	}
}

// spreadDeployment is issue 9's workload: pods of 1500m and 6Gi spread over
// zones (DoNotSchedule) and hosts (ScheduleAnyway).
func spreadDeployment(ns string, replicas int32) *appsv1.Deployment {
	d := deployment(ns, "web", replicas, "1500m")
	spec := &d.Spec.Template.Spec
	spec.Containers[0].Resources.Requests[corev1.ResourceMemory] = resource.MustParse("6Gi")
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{
		{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: selector},
		{MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: selector},
	}
	return d
}

// TestZoneSpreadRunsEveryPodOnNodesThatBootSlowly is issue 9's regression on
// the bed, with nodes registering 60-120 s after launch as real ones do, so
// that they become Ready at staggered times and kube-scheduler holds pods
// back from a zone that is momentarily ahead: every pod runs, and no node
// is deleted (every one was chosen for a pod) nor launched twice.
func TestZoneSpreadRunsEveryPodOnNodesThatBootSlowly(t *testing.T) {
	const ns, pods = "zone-spread", 30
	b := startBed(t, testbed.Options{BootDelay: testbed.RealisticBoot})
	b.create(nodeClass(), onDemandPool(poolName, 0), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		agent(ns, "node-agent", "100m", "128Mi", nil))
	claims := b.watchClaims(t)
	r := b.startReplica("zone-spread", replicaOptions{releaseOnCancel: true})
	b.waitElected(r, 30*time.Second)

	start := time.Now()
	b.create(spreadDeployment(ns, pods))
	b.eventually(bootSettle, func() error {
		if gone := claims.deletedClaims(); len(gone) > 0 {
			t.Fatalf("nodeclaims %v were deleted while the deployment needed every node", gone)
		}
		return b.running(ns, "web", pods)()
	})
	toRunning := time.Since(start)
	b.eventually(settle, b.daemonSetOnEveryNode(ns, "node-agent"))
	if err := b.oneInstancePerClaim(); err != nil {
		t.Error(err)
	}
	launched, _ := claims.inPool(poolName)
	live, err := b.claims()
	if err != nil {
		t.Fatal(err)
	}
	if len(launched) != len(live) {
		t.Errorf("%d nodeclaims were created and %d remain: a node was launched twice", len(launched), len(live))
	}
	b.registeredAfterBoot(t, testbed.RealisticBoot)
	t.Logf("%d pods running %s after creation, on %d nodes booting in %s-%s", pods, toRunning.Round(time.Second),
		len(live), testbed.RealisticBoot.Min, testbed.RealisticBoot.Max)
}

// registeredAfterBoot checks every Node registered no sooner than the boot
// delay after its instance's launch.
func (b *bed) registeredAfterBoot(t *testing.T, boot testbed.BootDelay) {
	t.Helper()
	var nodes corev1.NodeList
	if err := b.Admin.List(context.Background(), &nodes); err != nil {
		t.Fatal(err)
	}
	launched := map[string]time.Time{}
	for _, in := range b.Emulator.Instances() {
		launched["aws:///"+in.Zone+"/"+in.ID] = in.LaunchTime
	}
	for _, n := range nodes.Items {
		at, ok := launched[n.Spec.ProviderID]
		// The creation timestamp has whole seconds.
		if d := n.CreationTimestamp.Sub(at); ok && d < boot.Min-time.Second {
			t.Errorf("node %s registered %s after its launch, before the %s boot", n.Name, d, boot.Min)
		}
	}
}

// daemonSetOnEveryNode checks that the DaemonSet runs a Running pod on
// every node of the bed, and has no pod waiting.
func (b *bed) daemonSetOnEveryNode(ns, name string) func() error {
	return func() error {
		var nodes corev1.NodeList
		if err := b.Admin.List(context.Background(), &nodes); err != nil {
			return err
		}
		var pods corev1.PodList
		if err := b.Admin.List(context.Background(), &pods, client.InNamespace(ns), client.MatchingLabels{"app": name}); err != nil {
			return err
		}
		running := map[string]bool{}
		for _, p := range pods.Items {
			if p.Status.Phase != corev1.PodRunning {
				return fmt.Errorf("daemonset %s pod %s is %s on %q: %v", name, p.Name, p.Status.Phase, p.Spec.NodeName, p.Status.Conditions)
			}
			running[p.Spec.NodeName] = true
		}
		for _, n := range nodes.Items {
			if !running[n.Name] {
				return fmt.Errorf("daemonset %s runs no pod on node %s", name, n.Name)
			}
		}
		return nil
	}
}

// TestDaemonSetPodsGetTheRoomTheSolverCounted: a scale-out fills new nodes
// exactly once their DaemonSets' pods (which tolerate nothing but what the
// DaemonSet controller adds) are counted: 3 pods of 900m on an m6i.xlarge
// (3920m allocatable) beside 600m of DaemonSets, where 4 would fit without
// them. Nodes register over half a minute, so kube-scheduler has the
// pending pods and few nodes: it would fill the first nodes with 4 workload
// pods each before their DaemonSet pods bind, and starve those; the nodes
// stay cordoned until the DaemonSet pods are bound. Every DaemonSet pod
// runs, on every node, and every workload pod runs; a DaemonSet for other
// nodes is not waited for.
func TestDaemonSetPodsGetTheRoomTheSolverCounted(t *testing.T) {
	const ns, pods = "ds-room", 48
	b := startBed(t, testbed.Options{BootDelay: testbed.BootDelay{Min: 5 * time.Second, Max: 40 * time.Second, Seed: 3}})
	sets := []*appsv1.DaemonSet{agent(ns, "logs", "150m", "256Mi", nil), agent(ns, "metrics", "150m", "256Mi", nil),
		agent(ns, "cni", "150m", "256Mi", nil), agent(ns, "csi", "150m", "256Mi", nil),
		agent(ns, "arm-agent", "500m", "1Gi", map[string]string{corev1.LabelArchStable: "arm64"})}
	b.create(nodeClass(), onDemandPool(poolName, 0, "m6i.xlarge"), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	for _, ds := range sets {
		b.create(ds)
	}
	r := b.startReplica("ds-room", replicaOptions{releaseOnCancel: true})
	b.waitElected(r, 30*time.Second)
	web := deployment(ns, "web", pods, "900m")
	web.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory] = resource.MustParse("3Gi")
	b.create(web)

	b.eventually(2*settle, b.running(ns, "web", pods))
	for _, ds := range sets[:4] {
		b.eventually(settle, b.daemonSetOnEveryNode(ns, ds.Name))
	}
	var nodes corev1.NodeList
	if err := b.Admin.List(context.Background(), &nodes); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if n.Spec.Unschedulable {
			t.Errorf("node %s is still cordoned", n.Name)
		}
	}
	var armPods corev1.PodList
	if err := b.Admin.List(context.Background(), &armPods, client.InNamespace(ns), client.MatchingLabels{"app": "arm-agent"}); err != nil {
		t.Fatal(err)
	}
	if len(armPods.Items) != 0 {
		t.Errorf("%d arm-agent pods on amd64 nodes", len(armPods.Items))
	}
	t.Logf("%d pods and the pods of 4 daemonsets running on %d nodes", pods, len(nodes.Items))
}

// trainingJob is the seed's training Job: 4 pods of 8 GPUs each, all at once.
func trainingJob(ns string) *batchv1.Job {
	requests := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("256Gi"),
		resourceGPU: resource.MustParse("8")}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "train"},
		Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](4), Completions: ptr.To[int32](4),
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "train"}}, Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: ptr.To[int64](0),
				Containers: []corev1.Container{{Name: "train", Image: "registry.invalid/train:1",
					Resources: corev1.ResourceRequirements{Requests: requests, Limits: requests}}},
			}}},
	}
}

// jobSucceeded checks that want pods of the Job have succeeded (kwok
// completes a Job's pod as soon as it runs).
func (b *bed) jobSucceeded(job *batchv1.Job, want int32) func() error {
	return func() error {
		if err := b.Admin.Get(context.Background(), client.ObjectKeyFromObject(job), job); err != nil {
			return err
		}
		if job.Status.Succeeded != want {
			return fmt.Errorf("job %s: %d pods succeeded, %d active, want %d succeeded", job.Name, job.Status.Succeeded, job.Status.Active, want)
		}
		return nil
	}
}

// TestShortPoolFallsBackToTheNextPoolOnTheBed: a pool allowing only
// p5.48xlarge (weight 100), short in every zone, and one allowing only
// p4d.24xlarge (weight 10). The training Job's p5 claims are deleted after
// one launch attempt each, and the next batch launches its pods on p4d.
func TestShortPoolFallsBackToTheNextPoolOnTheBed(t *testing.T) {
	const ns = "training"
	b := startBed(t, testbed.Options{InstanceTypes: awsemu.BuiltinCatalogue()})
	for _, z := range b.Emulator.Zones() {
		b.Emulator.SetCapacity(awsemu.PoolKey{InstanceType: "p5.48xlarge", Zone: z.Name, CapacityType: awsemu.CapacityOnDemand}, 0)
	}
	b.create(nodeClass(), onDemandPool("p5", 100, "p5.48xlarge"), onDemandPool("p4d", 10, "p4d.24xlarge"),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	claims := b.watchClaims(t)
	r := b.startReplica("training", replicaOptions{releaseOnCancel: true})
	b.waitElected(r, 30*time.Second)

	start := time.Now()
	job := trainingJob(ns)
	b.create(job)
	b.eventually(settle, b.jobSucceeded(job, 4))
	p5, _ := claims.inPool("p5")
	p4d, firstP4d := claims.inPool("p4d")
	if len(p5) == 0 || len(p4d) != 4 {
		t.Fatalf("%d p5 and %d p4d nodeclaims, want some p5 claims tried and one p4d claim per pod", len(p5), len(p4d))
	}
	deleted := claims.deletedClaims()
	for _, name := range p5 {
		if !slices.Contains(deleted, name) {
			t.Errorf("p5 nodeclaim %s was not deleted", name)
		}
	}
	b.ranOnlyOn(t, "p4d.24xlarge", 4)
	// One launch attempt each: the process's counter, which only this test's
	// p5 pool moves.
	failures := testutil.ToFloat64(lifecycle.LaunchFailures.WithLabelValues("p5", lifecycle.ReasonInsufficientCapacity))
	if failures != float64(len(p5)) {
		t.Errorf("%v failed launches for %d p5 nodeclaims, want one each: a claim with nothing left to try is not retried", failures, len(p5))
	}
	t.Logf("pods on p4d: the first p4d nodeclaim came %s after the job was created (%d p5 claims tried once each, %d CreateFleet calls)",
		firstP4d.Sub(start).Round(10*time.Millisecond), len(p5), b.Emulator.Calls("CreateFleet"))
}

// ranOnlyOn checks every instance the emulator launched is of the type, and
// that there were want of them.
func (b *bed) ranOnlyOn(t *testing.T, instanceType string, want int) {
	t.Helper()
	n := 0
	for _, in := range b.Emulator.Instances() {
		if in.InstanceType != instanceType {
			t.Errorf("instance %s is a %s, want only %s", in.ID, in.InstanceType, instanceType)
			continue
		}
		n++
	}
	if n != want {
		t.Errorf("%d %s instances, want %d", n, instanceType, want)
	}
}
