package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowaws "github.com/stowage-dev/stowage/controller/aws"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/logging"
	"github.com/stowage-dev/stowage/controller/operator"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/iamcheck"
	"github.com/stowage-dev/stowage/internal/testbed"
	"github.com/stowage-dev/stowage/internal/testenv"
)

const (
	clusterName = "e2e"
	poolName    = "default"
)

// logs collects every replica's logs, controller-runtime's and client-go's
// included, for the test to search and to show when it fails.
var logs = &syncBuffer{}

func TestMain(m *testing.M) {
	l := logging.Logr(logging.New("runtime", "info", "json", logs))
	ctrllog.SetLogger(l)
	klog.SetLogger(l)
	os.Exit(iamcheck.Main(m))
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tail returns the last n lines.
func (b *syncBuffer) tail(n int) string {
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// bed is the whole-system bed (internal/testbed) of one test: root owns
// it and the replicas, which outlive each step; t is the running (sub)test.
type bed struct {
	*testbed.Bed
	t, root testing.TB
	// mismatchesExpected lets the test's Nodes register another allocatable
	// than the one predicted at launch; every other test fails on one.
	mismatchesExpected bool
}

// startBed starts the bed for t (failing it when the components are not
// built: make tools) and stops it when t ends, first logging the components' and
// the replicas' log tails if t failed.
func startBed(t testing.TB, o testbed.Options) *bed {
	t.Helper()
	o.BinDir = testenv.RequireAssets(t)
	if o.Cluster == "" {
		o.Cluster = clusterName
	}
	o.OnBridgeError = func(err error) { t.Logf("bridge: %v", err) }
	tb, err := testbed.Start(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	b := &bed{Bed: tb, t: t, root: t}
	mismatchesBefore := allocatableMismatches(t)
	t.Cleanup(func() {
		if n := allocatableMismatches(t) - mismatchesBefore; n > 0 && !b.mismatchesExpected {
			t.Errorf("%v Node resources registered another allocatable than predicted at launch (stowage_nodeclaims_allocatable_mismatch_total): "+
				"the prediction (controller/catalogue) and the nodes' rules (internal/nodeboot) disagree; the AllocatableMismatch events say where", n)
		}
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("component logs:\n%s", tb.ControlPlane.LogTails())
			t.Logf("last operator logs:\n%s", logs.tail(80))
		}
		if err := tb.Stop(); err != nil {
			t.Errorf("stopping the bed: %v", err)
		}
	})
	return b
}

// allocatableMismatches sums stowage_nodeclaims_allocatable_mismatch_total
// over its series: the process's count, which the tests, run one at a time,
// move in turn.
func allocatableMismatches(t testing.TB) float64 {
	return sumMetric(t, "stowage_nodeclaims_allocatable_mismatch_total", func(m *dto.Metric) float64 { return m.GetCounter().GetValue() })
}

func (b *bed) create(objs ...client.Object) {
	b.t.Helper()
	if err := b.Create(context.Background(), objs...); err != nil {
		b.t.Fatal(err)
	}
}

func nodeClass() *v1alpha1.NodeClass {
	tags := map[string]string{testbed.DiscoveryTag: clusterName}
	return &v1alpha1.NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: v1alpha1.NodeClassSpec{
			AMISelectorTerms:           []v1alpha1.AMISelectorTerm{{Alias: "al2023@latest"}},
			SubnetSelectorTerms:        []v1alpha1.SelectorTerm{{Tags: tags}},
			SecurityGroupSelectorTerms: []v1alpha1.SecurityGroupSelectorTerm{{Tags: tags}},
			Role:                       testbed.DefaultNodeRole,
		},
	}
}

func nodePool() *v1alpha1.NodePool {
	return &v1alpha1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: poolName},
		Spec: v1alpha1.NodePoolSpec{Template: v1alpha1.NodeClaimTemplate{
			ObjectMeta: v1alpha1.TemplateObjectMeta{Labels: map[string]string{"team": "e2e"}},
			Spec: v1alpha1.NodeClaimTemplateSpec{
				NodeClassRef: &v1alpha1.NodeClassReference{Group: v1alpha1.Group, Kind: v1alpha1.DefaultNodeClassKind, Name: "default"},
			},
		}},
	}
}

// replica is one in-process `stowage run`, with the operator's own wiring
// and the real AWS cloud provider, acting as the ServiceAccount.
type replica struct {
	name   string
	op     *operator.Operator
	cancel context.CancelFunc
	done   chan error
	// exited is closed once the replica has returned, stopped or not.
	exited chan struct{}
	once   sync.Once
	err    error
}

// replicaOptions vary a replica: a wrapper around its cloud provider, extra
// flags, and whether stopping it releases the lease (a graceful stop) or
// leaves it to expire (a crash).
type replicaOptions struct {
	wrap            func(*stowaws.CloudProvider) cloudprovider.CloudProvider
	flags           []string
	releaseOnCancel bool
	// manager, when set, edits the manager's options last, e.g. to wrap its client.
	manager func(*manager.Options)
	// mayLoseLease says that losing the lease (a renewal late on a loaded
	// machine), which ends the replica as a crash would, is no error.
	mayLoseLease bool
}

func (b *bed) startReplica(name string, ro replicaOptions) *replica {
	b.t.Helper()
	op, err := b.NewOperator(context.Background(), testbed.OperatorOptions{
		Flags: ro.flags, Logger: logging.New(name, "info", "json", logs), Wrap: ro.wrap,
		Options: []operator.Option{operator.WithManagerOptions(func(mo *manager.Options) {
			mo.Controller.SkipNameValidation = ptr.To(true) // several replicas in one process
			mo.LeaderElectionReleaseOnCancel = ro.releaseOnCancel
			if ro.manager != nil {
				ro.manager(mo)
			}
		})},
	})
	if err != nil {
		b.t.Fatalf("building replica %s: %v", name, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{name: name, op: op, cancel: cancel, done: make(chan error, 1), exited: make(chan struct{})}
	go func() { r.done <- op.Start(ctx); close(r.exited) }()
	b.root.Cleanup(func() {
		if err := r.stop(); err != nil && !(ro.mayLoseLease && strings.Contains(err.Error(), "leader election lost")) {
			b.root.Errorf("replica %s stopped with %v", name, err)
		}
	})
	return r
}

// stopTimeout bounds a replica's shutdown. A manager whose caches never
// synced (an informer refused by RBAC) does not return when cancelled:
// controller-runtime waits for the sync regardless.
const stopTimeout = 30 * time.Second

// stop cancels the replica and waits for it to return.
func (r *replica) stop() error {
	r.once.Do(func() {
		r.cancel()
		select {
		case r.err = <-r.done:
		case <-time.After(stopTimeout):
			r.err = fmt.Errorf("replica %s did not stop within %s: did its caches ever sync?", r.name, stopTimeout)
		}
	})
	return r.err
}

// alive reports whether the replica has not returned.
func (r *replica) alive() bool {
	select {
	case <-r.exited:
		return false
	default:
		return true
	}
}

func (r *replica) elected() bool {
	select {
	case <-r.op.Manager.Elected():
		return true
	default:
		return false
	}
}

// eventually polls check every 100 ms until it passes, failing the test with
// check's last error after timeout, or at once when a component has exited.
func (b *bed) eventually(timeout time.Duration, check func() error) {
	b.t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		if err := b.Err(); err != nil {
			return false, err
		}
		last = check()
		return last == nil, nil
	})
	if err != nil {
		b.t.Fatalf("still failing after %s: %v (%v)", timeout, last, err)
	}
}

func (b *bed) waitElected(r *replica, timeout time.Duration) {
	b.t.Helper()
	b.eventually(timeout, func() error {
		if !r.elected() {
			return fmt.Errorf("replica %s is not the leader", r.name)
		}
		return nil
	})
}

// deployment runs replicas pods requesting cpu and 1Gi each, in namespace ns.
func deployment(ns, name string, replicas int32, cpu string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       podSpec(cpu),
			},
		},
	}
}

func podSpec(cpu string) corev1.PodSpec {
	return corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](0),
		Containers: []corev1.Container{{
			Name: "app", Image: "registry.invalid/app:1",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("1Gi"),
			}},
		}},
	}
}

// pods returns the pods of app in ns.
func (b *bed) pods(ns, app string) ([]corev1.Pod, error) {
	var list corev1.PodList
	err := b.Admin.List(context.Background(), &list, client.InNamespace(ns), client.MatchingLabels{"app": app})
	return list.Items, err
}

// running checks that want pods of app run, each on a Node Stowage launched
// for its pool.
func (b *bed) running(ns, app string, want int) func() error {
	return b.runningIn(ns, app, want, poolName)
}

// runningIn checks that want pods of app run, each on a Node Stowage
// launched for the pool.
func (b *bed) runningIn(ns, app string, want int, pool string) func() error {
	return func() error {
		pods, err := b.pods(ns, app)
		if err != nil {
			return err
		}
		n := 0
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				n++
			}
		}
		if n != want {
			return fmt.Errorf("%d of %d %s pods running", n, want, app)
		}
		for _, p := range pods {
			var node corev1.Node
			if err := b.Admin.Get(context.Background(), client.ObjectKey{Name: p.Spec.NodeName}, &node); err != nil {
				return err
			}
			if node.Labels[v1alpha1.LabelNodePool] != pool || !strings.HasPrefix(node.Spec.ProviderID, "aws:///") {
				return fmt.Errorf("pod %s runs on node %s (pool %q, provider id %q), not one Stowage launched",
					p.Name, node.Name, node.Labels[v1alpha1.LabelNodePool], node.Spec.ProviderID)
			}
		}
		return nil
	}
}

func (b *bed) claims() ([]v1alpha1.NodeClaim, error) {
	var list v1alpha1.NodeClaimList
	err := b.Admin.List(context.Background(), &list)
	return list.Items, err
}

// instancesByClaim groups every instance the emulator still shows, in any
// state, by the NodeClaim it was launched for.
func (b *bed) instancesByClaim() map[string][]awsemu.Instance {
	out := map[string][]awsemu.Instance{}
	for _, in := range b.Emulator.Instances() {
		name := in.Tags[v1alpha1.LabelNodeClaim]
		out[name] = append(out[name], in)
	}
	return out
}

func live(in awsemu.Instance) bool {
	return in.State == awsemu.StatePending || in.State == awsemu.StateRunning
}

// oneInstancePerClaim checks that every claim has launched exactly one
// instance, ever, and that no live instance lacks a claim.
func (b *bed) oneInstancePerClaim() error {
	claims, err := b.claims()
	if err != nil {
		return err
	}
	byClaim := b.instancesByClaim()
	names := map[string]bool{}
	for _, c := range claims {
		names[c.Name] = true
		if n := len(byClaim[c.Name]); n != 1 {
			return fmt.Errorf("nodeclaim %s has %d instances, want 1", c.Name, n)
		}
	}
	for name, ins := range byClaim {
		for _, in := range ins {
			if live(in) && !names[name] {
				return fmt.Errorf("instance %s (%s) is live but its nodeclaim %q does not exist", in.ID, in.State, name)
			}
		}
	}
	return nil
}

// noForbiddenRequests fails when any log line reports a request the
// ServiceAccount's RBAC refused.
func noForbiddenRequests(t testing.TB) {
	t.Helper()
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "forbidden") || strings.Contains(line, "Forbidden") {
			t.Errorf("a request was refused: %s", line)
		}
	}
}
