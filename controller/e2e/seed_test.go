package e2e_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testbed"
)

// The seed's story: the web tier on c6i/m6i, and the vLLM tier needing
// 4 GPUs per pod in us-east-1a, where g5.12xlarge is short.
const (
	spikeNS     = "spike"
	webPods     = 192
	gpuPods     = 8
	gpuZone     = "us-east-1a"
	shortType   = "g5.12xlarge"
	resourceGPU = corev1.ResourceName("nvidia.com/gpu")
)

// fallbackTypes are the gpu-inference pool's other types.
var fallbackTypes = []string{"g5.24xlarge", "g6.12xlarge"}

// seedCatalogue is the built-in catalogue with g6.12xlarge priced just above
// g5.12xlarge, so that g5.12xlarge is the first choice, as in the seed's
// story: at list prices g6.12xlarge is the cheaper, and Stowage would route
// around the shortage without ever meeting it.
func seedCatalogue() []awsemu.InstanceTypeSpec {
	types := awsemu.BuiltinCatalogue()
	for i := range types {
		if types[i].Name == "g6.12xlarge" {
			types[i].OnDemandPrice = 6.5
		}
	}
	return types
}

// TestSeedPoolsRunTheSpike applies the seed's NodePools and NodeClasses
// (examples/2am-spike/snapshot.yaml) and creates 200 pending pods at once:
// a web Deployment and a GPU Deployment whose pods need 4 GPUs each in
// us-east-1a, where g5.12xlarge has no capacity. Every pod must end Running,
// bound by kube-scheduler; the GPU pods on a fallback type; every instance
// owned by a NodeClaim; the metrics and events there; and deleting the
// workloads and the claims must terminate every instance.
func TestSeedPoolsRunTheSpike(t *testing.T) {
	b := startBed(t, testbed.Options{InstanceTypes: seedCatalogue()})
	b.Emulator.SetCapacity(awsemu.PoolKey{InstanceType: shortType, Zone: gpuZone, CapacityType: awsemu.CapacityOnDemand}, 0)
	pools, err := b.SeedPools("../../" + testbed.SeedFile)
	if err != nil {
		t.Fatal(err)
	}
	b.create(pools...)
	metricsAddr, err := testbed.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	r := b.startReplica("seed", replicaOptions{releaseOnCancel: true, flags: []string{"--metrics-bind-address=" + metricsAddr}})
	b.waitElected(r, 30*time.Second)
	before := b.scrapeEventually(metricsAddr)

	started := time.Now()
	b.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: spikeNS}}, webDeployment(), gpuDeployment())
	b.eventually(settle, b.allRunning(spikeNS, webPods+gpuPods))
	claims, err := b.claims()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d pods running %.1fs after creation, on %d nodeclaims: %s", webPods+gpuPods, time.Since(started).Seconds(), len(claims), countTypes(claims))

	b.gpuPodsOnFallbacks(t)
	if err := b.oneInstancePerClaim(); err != nil {
		t.Error(err)
	}
	b.eventually(30*time.Second, b.eventsPresent)
	b.metricsGrew(t, before, b.scrape(t, metricsAddr), len(claims))
	b.deleteEverything(t, spikeNS, "web", "vllm")
	const terminated = "stowage_nodeclaims_terminated_total"
	if grew := b.scrape(t, metricsAddr)[terminated] - before[terminated]; grew < float64(len(claims)) {
		t.Errorf("%s grew by %v, want at least %d", terminated, grew, len(claims))
	}
	noForbiddenRequests(t)
}

// workload runs replicas pods requesting requests (also their limits), in the spike namespace.
func workload(name string, replicas int32, requests corev1.ResourceList, edit func(*corev1.PodSpec)) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	spec := corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](0),
		Containers: []corev1.Container{{Name: "app", Image: "registry.invalid/" + name + ":1",
			Resources: corev1.ResourceRequirements{Requests: requests, Limits: requests}}},
	}
	if edit != nil {
		edit(&spec)
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: spikeNS, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
}

func webDeployment() *appsv1.Deployment {
	return workload("web", webPods, corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi"),
	}, func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"tier": "web"} })
}

// gpuDeployment is the vLLM tier: 4 GPUs a pod, tolerating the
// gpu-inference pool's taint, required in gpuZone.
func gpuDeployment() *appsv1.Deployment {
	return workload("vllm", gpuPods, corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"),
		resourceGPU: resource.MustParse("4"),
	}, func(s *corev1.PodSpec) {
		s.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
		s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{gpuZone}}},
			}}},
		}}
	})
}

// allRunning checks that want pods of ns run, each bound to a Node Stowage
// launched.
func (b *bed) allRunning(ns string, want int) func() error {
	return func() error {
		var pods corev1.PodList
		if err := b.Admin.List(context.Background(), &pods, client.InNamespace(ns)); err != nil {
			return err
		}
		n := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil && p.Spec.NodeName != "" {
				n++
			}
		}
		if n != want || len(pods.Items) != want {
			return fmt.Errorf("%d of %d pods running (%d pods)", n, want, len(pods.Items))
		}
		return nil
	}
}

// gpuPodsOnFallbacks checks every GPU pod runs in gpuZone on a fallback type
// whose Node registered its GPUs.
func (b *bed) gpuPodsOnFallbacks(t *testing.T) {
	t.Helper()
	pods, err := b.pods(spikeNS, "vllm")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		var node corev1.Node
		if err := b.Admin.Get(context.Background(), client.ObjectKey{Name: p.Spec.NodeName}, &node); err != nil {
			t.Fatal(err)
		}
		it, zone := node.Labels[corev1.LabelInstanceTypeStable], node.Labels[corev1.LabelTopologyZone]
		gpus := node.Status.Allocatable[resourceGPU]
		if !slices.Contains(fallbackTypes, it) || zone != gpuZone || gpus.Value() != 4 || node.Labels[v1alpha1.LabelNodePool] != "gpu-inference" {
			t.Errorf("GPU pod %s runs on %s, a %s in %s of pool %q with %s GPUs; want one of %v in %s of gpu-inference with 4",
				p.Name, node.Name, it, zone, node.Labels[v1alpha1.LabelNodePool], gpus.String(), fallbackTypes, gpuZone)
		}
	}
	for _, in := range b.Emulator.Instances() {
		if in.InstanceType == shortType && in.Zone == gpuZone {
			t.Errorf("instance %s is a %s in %s, where the pool has no capacity", in.ID, shortType, gpuZone)
		}
	}
	// The shortage was met, not routed around: each GPU claim still allowed
	// the short type, the cheapest, and its fleet fell back.
	claims, err := b.claims()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range claims {
		if c.Labels[v1alpha1.LabelNodePool] == "gpu-inference" && !allows(c, corev1.LabelInstanceTypeStable, shortType) {
			t.Errorf("nodeclaim %s does not allow %s: %v", c.Name, shortType, c.Spec.Requirements)
		}
	}
}

// allows reports whether the claim's In requirement on key lists value.
func allows(c v1alpha1.NodeClaim, key, value string) bool {
	for _, r := range c.Spec.Requirements {
		if r.Key == key && r.Operator == string(corev1.NodeSelectorOpIn) && slices.Contains(r.Values, value) {
			return true
		}
	}
	return false
}

// eventsPresent checks that every pod of the spike has a Nominated event
// and every claim a Launched one.
func (b *bed) eventsPresent() error {
	var list eventsv1.EventList
	if err := b.Admin.List(context.Background(), &list); err != nil {
		return err
	}
	told := map[string]bool{} // kind/namespace/name -> has the event it should
	for _, e := range list.Items {
		r := e.Regarding
		if e.Reason == "Nominated" && r.Kind == "Pod" || e.Reason == "Launched" && r.Kind == "NodeClaim" {
			told[r.Kind+"/"+r.Namespace+"/"+r.Name] = true
		}
	}
	var pods corev1.PodList
	if err := b.Admin.List(context.Background(), &pods, client.InNamespace(spikeNS)); err != nil {
		return err
	}
	claims, err := b.claims()
	if err != nil {
		return err
	}
	for _, p := range pods.Items {
		if !told["Pod/"+p.Namespace+"/"+p.Name] {
			return fmt.Errorf("pod %s has no Nominated event", p.Name)
		}
	}
	for _, c := range claims {
		if !told["NodeClaim//"+c.Name] {
			return fmt.Errorf("nodeclaim %s has no Launched event", c.Name)
		}
	}
	return nil
}

// scrape reads the operator's metrics endpoint: metric name -> the sum of
// its samples over every label set (a histogram's as name_count).
func (b *bed) scrape(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	m, err := scrapeMetrics(addr)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// scrapeEventually waits for the endpoint to serve, the manager starting it
// a moment after the election.
func (b *bed) scrapeEventually(addr string) map[string]float64 {
	var m map[string]float64
	b.eventually(10*time.Second, func() (err error) { m, err = scrapeMetrics(addr); return err })
	return m
}

func scrapeMetrics(addr string) (map[string]float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics") //nolint:noctx // a loopback test server
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		name := strings.TrimSpace(line[:max(i, 0)])
		if j := strings.IndexByte(name, '{'); j >= 0 {
			name = name[:j]
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("metrics line %q: %w", line, err)
		}
		out[name] += v
	}
	return out, sc.Err()
}

// metricsGrew checks the counters a provisioning round moves grew by at
// least the claims it made (the registry is the process's, shared with the
// other tests, so it compares with the scrape before the round).
func (b *bed) metricsGrew(t *testing.T, before, after map[string]float64, claims int) {
	t.Helper()
	for _, name := range []string{"stowage_nodeclaims_created_total", "stowage_nodeclaims_registered_total",
		"stowage_nodeclaims_initialized_total", "stowage_cloudprovider_duration_seconds_count"} {
		if grew := after[name] - before[name]; grew < float64(claims) {
			t.Errorf("%s grew by %v, want at least %d (the nodeclaims)", name, grew, claims)
		}
	}
	for _, name := range []string{"stowage_nodeclaims_launch_failures_total", "stowage_nodeclaims_timed_out_total", "stowage_nodeclaims_disrupted_total"} {
		t.Logf("%s grew by %v", name, after[name]-before[name])
	}
}

// countTypes summarises claims as instance type x count.
func countTypes(claims []v1alpha1.NodeClaim) string {
	n := map[string]int{}
	for _, c := range claims {
		n[c.Labels[corev1.LabelInstanceTypeStable]+"/"+c.Labels[v1alpha1.LabelCapacityType]]++
	}
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var sb strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&sb, "%s x%d ", k, n[k])
	}
	return sb.String()
}
