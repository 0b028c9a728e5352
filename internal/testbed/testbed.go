// Package testbed is the whole-system bed Stowage's end-to-end tests and
// `make testbed` stand on: a real kube-apiserver, etcd, kube-scheduler and
// kube-controller-manager (internal/testenv), kwok as every node's kubelet,
// Stowage's CRDs and the manifests' RBAC, the AWS emulator served over HTTP
// to the real SDK, and Bridge, which plays the kubelet's registration on each
// emulated instance. Operators run in process with the operator's own wiring
// (NewOperator), so every decision Stowage makes is checked by the real
// kube-scheduler.
package testbed

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/stowage-dev/stowage/controller/apis/crds"
	stowaws "github.com/stowage-dev/stowage/controller/aws"
	"github.com/stowage-dev/stowage/controller/deploy"
	"github.com/stowage-dev/stowage/controller/operator"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// Defaults of Options.
const (
	DefaultCluster  = "bed"
	DefaultNodeRole = "StowageNodeRole"
	// Region is the emulated region.
	Region = "us-east-1"
)

// ServiceAccountUser is who operators act as: the manifests' ServiceAccount,
// so that its generated RBAC is what the bed exercises.
var ServiceAccountUser = rest.ImpersonationConfig{
	UserName: "system:serviceaccount:" + deploy.Namespace + ":" + deploy.ServiceAccount,
	Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + deploy.Namespace, "system:authenticated"},
}

// Options configure Start; zero fields take the defaults named.
type Options struct {
	// BinDir holds the control plane's binaries; testenv.Assets() when empty.
	BinDir string
	// Cluster names the cluster (DefaultCluster): the --cluster-name of
	// operators and the discovery tag of the emulator's subnets and
	// security group.
	Cluster string
	// NodeRole is the IAM role the emulator knows for nodes (DefaultNodeRole).
	NodeRole string
	// InstanceTypes the emulator offers; its small catalogue when nil.
	InstanceTypes []awsemu.InstanceTypeSpec
	// PoolCapacity is how many instances each offering can start; the
	// emulator's default when zero.
	PoolCapacity int
	// LaunchDelay is how long an instance stays pending and ShutdownDelay how
	// long it stays shutting-down; 500 ms each when zero.
	LaunchDelay, ShutdownDelay time.Duration
	// VisibilityDelay is how long a new instance stays unknown to EC2's API
	// (DescribeInstances, TerminateInstances), as EC2's eventual consistency
	// may hide it; 3 s when zero, so that every test on the bed meets it.
	VisibilityDelay time.Duration
	// BridgeInterval is how often the bridge looks for running instances; 100 ms when zero.
	BridgeInterval time.Duration
	// BootDelay delays each Node's registration after its instance's launch,
	// on the emulator's clock; zero registers as soon as the instance runs.
	// RealisticBoot is an EKS node's; keep it off where speed matters.
	BootDelay BootDelay
	// OnBridgeError hears of registrations that failed (and are retried); nil ignores them.
	OnBridgeError func(error)
	// TaintEviction runs kube-controller-manager's taint-eviction-controller
	// too: the pods of a node tainted NoExecute (unreachable, not-ready) are
	// evicted once their toleration runs out, as in a real cluster. Off by
	// default, so that a test's silent node keeps its pods.
	TaintEviction bool
	// Bare leaves Stowage uninstalled: no CRDs, namespace, service account or
	// RBAC, for a test that installs them itself (with Terraform).
	Bare bool
}

func (o Options) withDefaults() Options {
	if o.Cluster == "" {
		o.Cluster = DefaultCluster
	}
	if o.NodeRole == "" {
		o.NodeRole = DefaultNodeRole
	}
	if o.LaunchDelay == 0 {
		o.LaunchDelay = 500 * time.Millisecond
	}
	if o.ShutdownDelay == 0 {
		o.ShutdownDelay = 500 * time.Millisecond
	}
	if o.VisibilityDelay == 0 {
		o.VisibilityDelay = 3 * time.Second
	}
	if o.BridgeInterval == 0 {
		o.BridgeInterval = 100 * time.Millisecond
	}
	return o
}

// Bed is a running whole-system bed. Stop ends it.
type Bed struct {
	// ControlPlane is the running components; its KubeconfigPath reaches the
	// API server as an administrator.
	ControlPlane *testenv.ControlPlane
	// Admin is a client of ControlPlane as system:masters, knowing Stowage's types.
	Admin client.Client
	// AsStowage reaches the API server as ServiceAccountUser.
	AsStowage *rest.Config
	// Emulator is the emulated AWS, served at EmulatorURL.
	Emulator    *awsemu.Emulator
	EmulatorURL string
	// Clients are real SDK clients of the emulator, as `stowage run` builds them.
	Clients stowaws.Clients
	// Bridge registers the Nodes of the emulator's running instances.
	Bridge *Bridge
	// TokenWebhook authenticates EKS tokens against the emulator's STS.
	TokenWebhook *TokenWebhook
	// KubernetesVersion is the API server's minor version, e.g. 1.33.
	KubernetesVersion string
	// Cluster and NodeRole are the options' (defaulted) values.
	Cluster, NodeRole string

	stops []func() error // last first
}

// The kube-controller-manager controllers the bed runs on top of testenv's
// (Deployments, Jobs and DaemonSets make the pods; the disruption controller
// keeps PDBs' status, which the Eviction API reads), and client rates that let
// kube-controller-manager and kube-scheduler keep up with hundreds of pods at
// once.
var (
	workloadControllers = append(append([]string(nil), testenv.ControllerManagerControllers...),
		"deployment-controller", "replicaset-controller", "job-controller", "daemonset-controller", "disruption-controller")
	clientRates = []string{"--kube-api-qps=200", "--kube-api-burst=300"}
)

// componentFlags are the scheduler's and kube-controller-manager's flags for o.
func componentFlags(o Options) map[string][]string {
	controllers := workloadControllers
	if o.TaintEviction {
		controllers = append(append([]string(nil), controllers...), "taint-eviction-controller")
	}
	return map[string][]string{
		testenv.KubeControllerManager: append([]string{"--controllers=" + strings.Join(controllers, ",")}, clientRates...),
		testenv.KubeScheduler:         clientRates,
	}
}

// withAPIServerFlags copies flags with extra kube-apiserver flags added.
func withAPIServerFlags(flags map[string][]string, extra []string) map[string][]string {
	out := make(map[string][]string, len(flags)+1)
	for k, v := range flags {
		out[k] = v
	}
	out[testenv.KubeAPIServer] = append(append([]string(nil), flags[testenv.KubeAPIServer]...), extra...)
	return out
}

// Start starts the token webhook (EKS tokens, verified by the emulator's
// STS) and the control plane, installs Stowage's CRDs and RBAC, serves
// the emulator seeded with the cluster's network, the EKS images of the API
// server's version and the node role, and runs the bridge. On error what was
// started is stopped again.
func Start(ctx context.Context, o Options) (*Bed, error) {
	o = o.withDefaults()
	wh, err := StartTokenWebhook(os.TempDir(), o.Cluster, clock.RealClock{})
	if err != nil {
		return nil, err
	}
	cpo := testenv.BedOptions()
	cpo.BinDir, cpo.ExtraFlags = o.BinDir, withAPIServerFlags(componentFlags(o), wh.Flags())
	cp, err := testenv.StartControlPlane(ctx, cpo)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("starting the control plane: %w", err), wh.Close())
	}
	b := &Bed{ControlPlane: cp, AsStowage: rest.CopyConfig(cp.Config), Cluster: o.Cluster, NodeRole: o.NodeRole, TokenWebhook: wh}
	b.stops = append(b.stops, wh.Close, cp.Stop)
	b.AsStowage.Impersonate = ServiceAccountUser
	if err := b.start(ctx, o); err != nil {
		return nil, errors.Join(err, b.Stop())
	}
	return b, nil
}

func (b *Bed) start(ctx context.Context, o Options) error {
	scheme, err := operator.Scheme()
	if err != nil {
		return err
	}
	if b.Admin, err = client.New(b.ControlPlane.Config, client.Options{Scheme: scheme}); err != nil {
		return fmt.Errorf("building the admin client: %w", err)
	}
	if !o.Bare {
		if err := b.install(ctx); err != nil {
			return err
		}
	}
	if b.KubernetesVersion, err = operator.KubernetesVersion(b.AsStowage); err != nil {
		return err
	}
	if err := b.startEmulator(ctx, o); err != nil {
		return err
	}
	b.Bridge = NewBridge(b.Emulator, b.Admin, o.BootDelay)
	bctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Bridge.Run(bctx, o.BridgeInterval, o.OnBridgeError)
	}()
	b.stops = append(b.stops, func() error { cancel(); <-done; return nil })
	return nil
}

// install applies the CRDs and the manifests' namespace, ServiceAccount and
// roles (not the Deployment: operators run in process).
func (b *Bed) install(ctx context.Context) error {
	defs, err := crds.CRDs()
	if err != nil {
		return err
	}
	if _, err := envtest.InstallCRDs(b.ControlPlane.Config, envtest.CRDInstallOptions{CRDs: defs}); err != nil {
		return fmt.Errorf("installing the CRDs: %w", err)
	}
	ms, err := deploy.Manifests()
	if err != nil {
		return err
	}
	for _, m := range ms {
		switch m.Object.(type) {
		case *corev1.Namespace, *corev1.ServiceAccount, *rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding, *rbacv1.Role, *rbacv1.RoleBinding:
			if err := b.Create(ctx, m.Object); err != nil {
				return err
			}
		}
	}
	return nil
}

// startEmulator serves the emulator on loopback, seeded for the cluster, and
// builds real SDK clients for it the way `stowage run` does, with a base
// endpoint.
func (b *Bed) startEmulator(ctx context.Context, o Options) error {
	cfg := awsemu.DefaultConfig()
	cfg.Region = Region
	if o.InstanceTypes != nil {
		cfg.InstanceTypes = o.InstanceTypes
	}
	if o.PoolCapacity > 0 {
		cfg.PoolCapacity = o.PoolCapacity
	}
	cfg.PendingDelay, cfg.ShuttingDownDelay, cfg.VisibilityDelay = o.LaunchDelay, o.ShutdownDelay, o.VisibilityDelay
	b.Emulator = awsemu.New(cfg)
	srv := httptest.NewServer(b.Emulator.Handler())
	b.stops = append(b.stops, func() error { srv.Close(); return nil })
	b.EmulatorURL = srv.URL
	b.stops = append(b.stops, b.Emulator.Shutdown) // pollers and functions stop before the server
	if err := b.TokenWebhook.SetSTS(srv.URL); err != nil {
		return err
	}
	b.Emulator.SeedDefaultNetwork(b.Cluster)
	b.Emulator.SeedEKSImages(b.KubernetesVersion)
	b.Emulator.AddRole(b.NodeRole)
	// The bed is the emulator's EKS cluster, and its access entries map IAM roles as EKS's do.
	b.Emulator.AddEKSCluster(awsemu.EKSCluster{Name: b.Cluster, Endpoint: b.ControlPlane.APIServerURL,
		CAData: b.ControlPlane.Config.CAData, Version: b.KubernetesVersion, ServiceIPv4CIDR: testenv.ServiceClusterIPRange, IPFamily: "ipv4",
		ZonalShift: true})
	b.TokenWebhook.UseAccessEntries(func(roleARN string) (RoleMapping, bool) {
		a, ok := b.Emulator.AccessEntryFor(b.Cluster, roleARN)
		return RoleMapping{Username: a.Username, Groups: a.Groups}, ok
	})
	var err error
	b.Clients, err = stowaws.LoadClients(ctx, Region, config.WithBaseEndpoint(srv.URL),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("AKIDEMULATOR", "secret", "")),
		config.WithRetryMaxAttempts(3))
	return err
}

// Create creates each object as an administrator.
func (b *Bed) Create(ctx context.Context, objs ...client.Object) error {
	for _, o := range objs {
		if err := b.Admin.Create(ctx, o); err != nil {
			return fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
		}
	}
	return nil
}

// Err reports the first bed component that has exited; nil while all run.
func (b *Bed) Err() error { return b.ControlPlane.Err() }

// Stop stops the bridge, the emulator's server and the control plane, in
// that order. Operators should be stopped first.
func (b *Bed) Stop() error {
	var errs []error
	for i := len(b.stops) - 1; i >= 0; i-- {
		errs = append(errs, b.stops[i]())
	}
	b.stops = nil
	return errors.Join(errs...)
}
