package e2e_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/stowage-dev/stowage/controller/apis/crds"
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowaws "github.com/stowage-dev/stowage/controller/aws"
	"github.com/stowage-dev/stowage/controller/aws/amifamily"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/deploy"
	"github.com/stowage-dev/stowage/controller/e2e"
	"github.com/stowage-dev/stowage/controller/logging"
	"github.com/stowage-dev/stowage/controller/operator"
	"github.com/stowage-dev/stowage/controller/options"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testenv"
)

const (
	clusterName = "e2e"
	region      = "us-east-1"
	nodeRole    = "StowageNodeRole"
	poolName    = "default"
)

// serviceAccountUser is who the replicas act as: the manifests' ServiceAccount,
// so that its generated RBAC is what the tests exercise.
var serviceAccountUser = rest.ImpersonationConfig{
	UserName: "system:serviceaccount:" + deploy.Namespace + ":" + deploy.ServiceAccount,
	Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + deploy.Namespace, "system:authenticated"},
}

// logs collects every replica's logs, controller-runtime's and client-go's
// included, for the test to search and to show when it fails.
var logs = &syncBuffer{}

func TestMain(m *testing.M) {
	l := logging.Logr(logging.New("runtime", "info", "json", logs))
	ctrllog.SetLogger(l)
	klog.SetLogger(l)
	os.Exit(m.Run())
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

// bed is the whole system: the control plane with kube-scheduler,
// kube-controller-manager and kwok, Stowage's CRDs and RBAC, the AWS emulator
// on loopback, and the bridge registering its instances' Nodes.
type bed struct {
	// t is the running (sub)test; root is the test that owns the bed, and
	// the replicas, which outlive each step.
	t, root testing.TB
	cp      *testenv.ControlPlane
	admin   client.Client
	emu     *awsemu.Emulator
	clients stowaws.Clients
	bridge  *e2e.Bridge
	version string
	// asStowage reaches the API server as the controller's ServiceAccount.
	asStowage *rest.Config
}

// The kube-controller-manager controllers the bed needs on top of testenv's:
// Deployments make the pods.
var workloadControllers = append(append([]string(nil), testenv.ControllerManagerControllers...),
	"deployment-controller", "replicaset-controller")

func startBed(t testing.TB) *bed {
	t.Helper()
	o := testenv.BedOptions()
	o.ExtraFlags = map[string][]string{testenv.KubeControllerManager: {"--controllers=" + strings.Join(workloadControllers, ",")}}
	cp := testenv.Start(t, o)
	b := &bed{t: t, root: t, cp: cp, asStowage: rest.CopyConfig(cp.Config)}
	b.asStowage.Impersonate = serviceAccountUser
	var err error
	if b.admin, err = client.New(cp.Config, client.Options{Scheme: mustScheme(t)}); err != nil {
		t.Fatal(err)
	}
	b.install()
	if b.version, err = operator.KubernetesVersion(b.asStowage); err != nil {
		t.Fatal(err)
	}
	b.startEmulator()
	b.bridge = e2e.NewBridge(b.emu, b.admin)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.bridge.Run(ctx, 100*time.Millisecond, func(err error) { t.Logf("bridge: %v", err) })
	}()
	t.Cleanup(func() { cancel(); <-done })
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last operator logs:\n%s", logs.tail(80))
		}
	})
	b.create(nodeClass(), nodePool())
	return b
}

func mustScheme(t testing.TB) *runtime.Scheme {
	s, err := operator.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// install applies the CRDs and the manifests' namespace, ServiceAccount and
// roles (not the Deployment: the replicas run in the test's process).
func (b *bed) install() {
	defs, err := crds.CRDs()
	if err != nil {
		b.t.Fatal(err)
	}
	if _, err := envtest.InstallCRDs(b.cp.Config, envtest.CRDInstallOptions{CRDs: defs}); err != nil {
		b.t.Fatalf("installing the CRDs: %v", err)
	}
	ms, err := deploy.Manifests()
	if err != nil {
		b.t.Fatal(err)
	}
	for _, m := range ms {
		switch m.Object.(type) {
		case *corev1.Namespace, *corev1.ServiceAccount, *rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding, *rbacv1.Role, *rbacv1.RoleBinding:
			b.create(m.Object)
		}
	}
}

// startEmulator serves the emulator over HTTP, seeded with the network, the
// EKS images of the API server's version and the node role, and builds real
// SDK clients for it the way `stowage run` does, with a base endpoint.
func (b *bed) startEmulator() {
	cfg := awsemu.DefaultConfig()
	cfg.PendingDelay, cfg.ShuttingDownDelay = 500*time.Millisecond, 500*time.Millisecond
	b.emu = awsemu.New(cfg)
	srv := httptest.NewServer(b.emu.Handler())
	b.t.Cleanup(srv.Close)
	b.emu.SeedDefaultNetwork(clusterName)
	b.emu.SeedEKSImages(b.version)
	b.emu.AddRole(nodeRole)
	var err error
	b.clients, err = stowaws.LoadClients(context.Background(), region, config.WithBaseEndpoint(srv.URL),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("AKIDEMULATOR", "secret", "")),
		config.WithRetryMaxAttempts(3))
	if err != nil {
		b.t.Fatal(err)
	}
}

func (b *bed) create(objs ...client.Object) {
	b.t.Helper()
	for _, o := range objs {
		if err := b.admin.Create(context.Background(), o); err != nil {
			b.t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

func nodeClass() *v1alpha1.NodeClass {
	tags := map[string]string{"stowage.dev/discovery": clusterName}
	return &v1alpha1.NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: v1alpha1.NodeClassSpec{
			AMISelectorTerms:           []v1alpha1.AMISelectorTerm{{Alias: "al2023@latest"}},
			SubnetSelectorTerms:        []v1alpha1.SelectorTerm{{Tags: tags}},
			SecurityGroupSelectorTerms: []v1alpha1.SecurityGroupSelectorTerm{{Tags: tags}},
			Role:                       nodeRole,
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
	once   sync.Once
	err    error
}

// replicaOptions vary a replica: a wrapper around its cloud provider, and
// whether stopping it releases the lease (a graceful stop) or leaves it to
// expire (a crash).
type replicaOptions struct {
	wrap            func(*stowaws.CloudProvider) cloudprovider.CloudProvider
	releaseOnCancel bool
}

// Leases short enough for quick failovers, long enough for 2 busy cores.
var replicaFlags = []string{
	"--cluster-name=" + clusterName, "--region=" + region,
	"--metrics-bind-address=0", "--health-probe-bind-address=0",
	"--leader-election-namespace=" + deploy.Namespace, "--leader-election-lease-duration=4s",
	"--leader-election-renew-deadline=3s", "--leader-election-retry-period=500ms",
}

func (b *bed) options() *options.Options {
	o, err := options.Parse(replicaFlags, func(string) string { return "" }, io.Discard)
	if err != nil {
		b.t.Fatal(err)
	}
	return o
}

func (b *bed) startReplica(name string, ro replicaOptions) *replica {
	b.t.Helper()
	log := logging.New(name, "info", "json", logs)
	newCloud := func(mgr manager.Manager) (cloudprovider.CloudProvider, error) {
		cp := stowaws.New(b.clients, operator.NodeClasses{Reader: mgr.GetClient()}, stowaws.Options{
			Cluster: amifamily.Cluster{Name: clusterName, Endpoint: b.cp.APIServerURL,
				CABundle: base64.StdEncoding.EncodeToString(b.cp.Config.CAData), CIDR: "10.100.0.0/16"},
			Region: region, KubernetesVersion: b.version, Logger: log,
		})
		if ro.wrap != nil {
			return ro.wrap(cp), nil
		}
		return cp, nil
	}
	op, err := operator.New(context.Background(), b.asStowage, b.options(), newCloud, log,
		operator.WithManagerOptions(func(mo *manager.Options) {
			mo.Controller.SkipNameValidation = ptr.To(true) // several replicas in one process
			mo.LeaderElectionReleaseOnCancel = ro.releaseOnCancel
		}))
	if err != nil {
		b.t.Fatalf("building replica %s: %v", name, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{name: name, op: op, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- op.Start(ctx) }()
	b.root.Cleanup(func() {
		if err := r.stop(); err != nil {
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
		if err := b.cp.Err(); err != nil {
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
	err := b.admin.List(context.Background(), &list, client.InNamespace(ns), client.MatchingLabels{"app": app})
	return list.Items, err
}

// running checks that want pods of app run, each on a Node Stowage launched
// for its pool.
func (b *bed) running(ns, app string, want int) func() error {
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
			if err := b.admin.Get(context.Background(), client.ObjectKey{Name: p.Spec.NodeName}, &node); err != nil {
				return err
			}
			if node.Labels[v1alpha1.LabelNodePool] != poolName || !strings.HasPrefix(node.Spec.ProviderID, "aws:///") {
				return fmt.Errorf("pod %s runs on node %s (pool %q, provider id %q), not one Stowage launched",
					p.Name, node.Name, node.Labels[v1alpha1.LabelNodePool], node.Spec.ProviderID)
			}
		}
		return nil
	}
}

func (b *bed) claims() ([]v1alpha1.NodeClaim, error) {
	var list v1alpha1.NodeClaimList
	err := b.admin.List(context.Background(), &list)
	return list.Items, err
}

// instancesByClaim groups every instance the emulator still shows, in any
// state, by the NodeClaim it was launched for.
func (b *bed) instancesByClaim() map[string][]awsemu.Instance {
	out := map[string][]awsemu.Instance{}
	for _, in := range b.emu.Instances() {
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
