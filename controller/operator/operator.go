// Package operator builds the controller-runtime manager `stowage run` runs:
// leader election on a Lease, Prometheus metrics, health and readiness probes,
// and the scheme of every object Stowage reads or writes. The controllers
// register themselves on it.
package operator

import (
	"fmt"
	"net/http"

	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	provreqv1 "github.com/stowage-dev/stowage/controller/apis/autoscaling/v1"
	autoscalingv1beta1 "github.com/stowage-dev/stowage/controller/apis/autoscaling/v1beta1"
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/logging"
	"github.com/stowage-dev/stowage/controller/options"
)

// Scheme knows the built-in Kubernetes types, Stowage's own, CapacityBuffers
// and ProvisioningRequests.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("registering Kubernetes types: %w", err)
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("registering stowage.dev types: %w", err)
	}
	if err := autoscalingv1beta1.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("registering autoscaling.x-k8s.io types: %w", err)
	}
	if err := provreqv1.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("registering autoscaling.x-k8s.io/v1 types: %w", err)
	}
	return s, nil
}

// NewManager builds the manager from validated options. Readiness waits for the
// informer caches; liveness is a ping. edits adjust the manager's options last
// (tests use them to free the ports).
func NewManager(cfg *rest.Config, o *options.Options, log hclog.Logger, edits ...func(*manager.Options)) (manager.Manager, error) {
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = float32(o.KubeAPIQPS), o.KubeAPIBurst
	cfg.UserAgent = "stowage"
	mo := manager.Options{
		Scheme: scheme,
		// Nothing reads managed fields: keep them out of the cache's memory.
		Cache:                         cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
		Logger:                        logging.Logr(log.Named("runtime")),
		Metrics:                       metricsserver.Options{BindAddress: o.MetricsAddr},
		HealthProbeBindAddress:        o.HealthAddr,
		LeaderElection:                o.LeaderElect,
		LeaderElectionID:              o.LeaderElectionName,
		LeaderElectionNamespace:       o.LeaderElectionNamespace,
		LeaderElectionResourceLock:    "leases",
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &o.LeaseDuration,
		RenewDeadline:                 &o.RenewDeadline,
		RetryPeriod:                   &o.RetryPeriod,
	}
	for _, edit := range edits {
		edit(&mo)
	}
	mgr, err := manager.New(cfg, mo)
	if err != nil {
		return nil, fmt.Errorf("building the manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding the liveness check: %w", err)
	}
	if err := mgr.AddReadyzCheck("informers", cachesSynced(mgr)); err != nil {
		return nil, fmt.Errorf("adding the readiness check: %w", err)
	}
	return mgr, nil
}

// cachesSynced is ready once the manager's informers have synced.
func cachesSynced(mgr manager.Manager) healthz.Checker {
	return func(req *http.Request) error {
		if !mgr.GetCache().WaitForCacheSync(req.Context()) {
			return fmt.Errorf("informer caches have not synced")
		}
		return nil
	}
}
