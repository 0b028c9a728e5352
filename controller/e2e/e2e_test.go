package e2e_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowaws "github.com/stowage-dev/stowage/controller/aws"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testbed"
)

// settle bounds each wait for the system to converge; on an idle machine
// each takes a few seconds.
const settle = 90 * time.Second

const ns = "apps"

// TestEndToEnd runs Stowage on the whole bed through one story: pending pods
// get nodes; a replica that dies between CreateFleet and recording the
// launch is replaced without a second instance; a standby takes over from a
// leader that dies mid-provisioning; and deleting everything drains and
// terminates every instance. Each replica acts as the manifests'
// ServiceAccount, so the story also proves the generated RBAC suffices.
func TestEndToEnd(t *testing.T) {
	b := startBed(t, testbed.Options{})
	b.create(nodeClass(), nodePool())
	b.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	var leader *replica
	steps := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"pending pods get nodeclaims, instances and nodes, and run", func(t *testing.T) { leader = provisionsPendingPods(t, b) }},
		{"a crash between launch and status launches no second instance", func(t *testing.T) { leader = survivesCrash(t, b, leader) }},
		{"the standby continues provisioning when the leader dies", func(t *testing.T) { leader = failsOver(t, b, leader) }},
		{"deleting the workloads and nodeclaims terminates every instance", func(t *testing.T) { terminatesEverything(t, b) }},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { b.t = t; s.run(t) }) {
			return // later steps build on this one
		}
	}
	b.t = t
	noForbiddenRequests(t)
}

func provisionsPendingPods(t *testing.T, b *bed) *replica {
	a := b.startReplica("replica-a", replicaOptions{releaseOnCancel: true})
	b.waitElected(a, 30*time.Second)
	b.create(deployment(ns, "web", 6, "1"))
	b.eventually(settle, b.running(ns, "web", 6))
	b.eventually(settle, func() error { return b.claimsReady() })
	if err := b.oneInstancePerClaim(); err != nil {
		t.Error(err)
	}
	claims, _ := b.claims()
	t.Logf("%d nodeclaims for 6 pods: %s", len(claims), describe(claims))
	// The bed's API server serves Services on 10.0.0.0/24: a node told
	// another CIDR would hand its pods a DNS server that does not exist.
	for _, c := range claims {
		var dns []string
		if k, ok := b.Bridge.Kubelet(c.Status.NodeName); ok {
			dns = k.Config.ClusterDNS
		}
		if !slices.Equal(dns, []string{"10.0.0.10"}) {
			t.Errorf("node %s's kubelet has clusterDNS %v, want the service CIDR's 10.0.0.10", c.Status.NodeName, dns)
		}
	}
	b.eventually(10*time.Second, func() error { return b.nominated("web") })
	if n := cloudCalls(t, "Create"); n < float64(len(claims)) {
		t.Errorf("the cloud provider metrics count %v Create calls, want at least %d", n, len(claims))
	}
	return a
}

// claimsReady checks every claim is Ready on a Node carrying the pool's labels.
func (b *bed) claimsReady() error {
	claims, err := b.claims()
	if err != nil {
		return err
	}
	for _, c := range claims {
		if !nodeclaim.IsTrue(&c, v1alpha1.ConditionReady) {
			return fmt.Errorf("nodeclaim %s is not ready: %v", c.Name, c.Status.Conditions)
		}
		var node corev1.Node
		if err := b.Admin.Get(context.Background(), client.ObjectKey{Name: c.Status.NodeName}, &node); err != nil {
			return err
		}
		if node.Labels["team"] != "e2e" || node.Spec.ProviderID != c.Status.ProviderID {
			return fmt.Errorf("node %s lacks the pool's labels or claim %s's provider id", node.Name, c.Name)
		}
	}
	return nil
}

// nominated checks that the provisioner told each pod of app which claim it is for.
func (b *bed) nominated(app string) error {
	var list eventsv1.EventList
	if err := b.Admin.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		return err
	}
	pods, err := b.pods(ns, app)
	if err != nil {
		return err
	}
	told := map[string]bool{}
	for _, e := range list.Items {
		if e.Reason == "Nominated" && e.Regarding.Kind == "Pod" {
			told[e.Regarding.Name] = true
		}
	}
	for _, p := range pods {
		if !told[p.Name] {
			return fmt.Errorf("pod %s has no Nominated event", p.Name)
		}
	}
	return nil
}

func describe(claims []v1alpha1.NodeClaim) string {
	var s string
	for _, c := range claims {
		s += fmt.Sprintf("%s=%s/%s ", c.Name, c.Labels["node.kubernetes.io/instance-type"], c.Labels["topology.kubernetes.io/zone"])
	}
	return s
}

// cloudCalls sums the cloud provider duration histogram's samples for method.
func cloudCalls(t testing.TB, method string) float64 {
	return sumMetric(t, "stowage_cloudprovider_duration_seconds", func(m *dto.Metric) float64 {
		for _, l := range m.GetLabel() {
			if l.GetName() == "method" && l.GetValue() == method {
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
		return 0
	})
}

// sumMetric sums value over the series of the process's metric named name.
func sumMetric(t testing.TB, name string, value func(*dto.Metric) float64) float64 {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, f := range families {
		if f.GetName() == name {
			for _, m := range f.GetMetric() {
				n += value(m)
			}
		}
	}
	return n
}

// crashAfterLaunch is the cloud provider of a replica that dies right after
// CreateFleet: Create launches the instance, then never returns (until the
// replica stops), so the claim's status never records the launch.
type crashAfterLaunch struct {
	*stowaws.CloudProvider
	launched atomic.Int32
}

func (c *crashAfterLaunch) Create(ctx context.Context, claim *v1alpha1.NodeClaim) (*v1alpha1.NodeClaim, error) {
	if _, err := c.CloudProvider.Create(ctx, claim); err != nil {
		return nil, err
	}
	c.launched.Add(1)
	<-ctx.Done()
	return nil, ctx.Err()
}

func survivesCrash(t *testing.T, b *bed, leader *replica) *replica {
	if err := leader.stop(); err != nil {
		t.Fatal(err)
	}
	crasher := &crashAfterLaunch{}
	doomed := b.startReplica("replica-b", replicaOptions{wrap: func(cp *stowaws.CloudProvider) cloudprovider.CloudProvider {
		crasher.CloudProvider = cp
		return crasher
	}})
	b.waitElected(doomed, 30*time.Second)
	b.Bridge.Pause() // no kubelet comes up before the crash
	b.create(deployment(ns, "batch", 4, "1500m"))
	var unrecorded []string
	b.eventually(settle, func() error {
		var err error
		unrecorded, err = b.launchedButUnrecorded()
		if err == nil && (len(unrecorded) == 0 || int(crasher.launched.Load()) < len(unrecorded)) {
			err = fmt.Errorf("%d claims launched of %d created without a provider id", crasher.launched.Load(), len(unrecorded))
		}
		return err
	})
	if err := doomed.stop(); err != nil { // a crash: the lease is left to expire
		t.Fatal(err)
	}
	t.Logf("crashed with %d claims launched but not recorded: %v", len(unrecorded), unrecorded)
	fleets := b.Emulator.Calls("CreateFleet")

	next := b.startReplica("replica-c", replicaOptions{})
	b.Bridge.Resume()
	b.waitElected(next, 30*time.Second)
	b.eventually(settle, b.running(ns, "batch", 4))
	b.eventually(settle, func() error { return b.claimsReady() })
	if err := b.oneInstancePerClaim(); err != nil {
		t.Error(err)
	}
	byClaim := b.instancesByClaim()
	for _, name := range unrecorded {
		if n := len(byClaim[name]); n != 1 {
			t.Errorf("nodeclaim %s, launched before the crash, has %d instances", name, n)
		}
	}
	t.Logf("CreateFleet calls after the restart: %d", b.Emulator.Calls("CreateFleet")-fleets)
	return next
}

// launchedButUnrecorded returns the claims without a provider id, failing
// unless each has an instance in the emulator: the crash's window.
func (b *bed) launchedButUnrecorded() ([]string, error) {
	claims, err := b.claims()
	if err != nil {
		return nil, err
	}
	byClaim := b.instancesByClaim()
	var out []string
	for _, c := range claims {
		if c.Status.ProviderID != "" {
			continue
		}
		if len(byClaim[c.Name]) == 0 {
			return nil, fmt.Errorf("nodeclaim %s has no instance yet", c.Name)
		}
		out = append(out, c.Name)
	}
	return out, nil
}

func terminatesEverything(t *testing.T, b *bed) {
	b.deleteEverything(t, ns, "web", "batch", "api")
}

// deleteEverything deletes the Deployments apps of namespace and, once
// their pods are gone, every NodeClaim, and waits until no claim, Node or pod
// of namespace is left and every instance has terminated. Claims deleted
// while the Deployments' pods still run would have new capacity launched for
// those pods (replacement before eviction) after the claims were listed.
func (b *bed) deleteEverything(t testing.TB, namespace string, apps ...string) {
	ctx := context.Background()
	for _, app := range apps {
		if err := b.Admin.Delete(ctx, deployment(namespace, app, 0, "1"), client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			t.Fatal(err)
		}
	}
	b.eventually(settle, func() error {
		for _, app := range apps {
			if err := b.noPods(namespace, client.MatchingLabels{"app": app}); err != nil {
				return fmt.Errorf("app %s: %w", app, err)
			}
		}
		return nil
	})
	claims, err := b.claims()
	if err != nil {
		t.Fatal(err)
	}
	for i := range claims {
		if err := b.Admin.Delete(ctx, &claims[i]); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
	}
	b.eventually(settle, func() error {
		left, err := b.claims()
		if err != nil || len(left) > 0 {
			return fmt.Errorf("%d nodeclaims left (%v)", len(left), err)
		}
		var nodes corev1.NodeList
		if err := b.Admin.List(ctx, &nodes); err != nil || len(nodes.Items) > 0 {
			return fmt.Errorf("%d nodes left (%v)", len(nodes.Items), err)
		}
		for _, in := range b.Emulator.Instances() {
			if in.State != awsemu.StateTerminated {
				return fmt.Errorf("instance %s is %s", in.ID, in.State)
			}
		}
		return b.noPods(namespace)
	})
	t.Logf("%d instances launched in all, every one terminated", len(b.Emulator.Instances()))
}

// noPods fails while a pod of namespace (that the options select) is left.
func (b *bed) noPods(namespace string, opts ...client.ListOption) error {
	var pods corev1.PodList
	if err := b.Admin.List(context.Background(), &pods, append(opts, client.InNamespace(namespace))...); err != nil || len(pods.Items) > 0 {
		return fmt.Errorf("%d pods left (%v)", len(pods.Items), err)
	}
	return nil
}
