package metrics

import (
	"context"

	"k8s.io/utils/clock"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
)

// Method label values, one per CloudProvider method.
const (
	MethodCreate        = "Create"
	MethodDelete        = "Delete"
	MethodGet           = "Get"
	MethodList          = "List"
	MethodInstanceTypes = "InstanceTypes"
	MethodIsDrifted     = "IsDrifted"
)

var _ cloudprovider.CloudProvider = (*decorator)(nil)

type decorator struct {
	cloudprovider.CloudProvider
	m   *Metrics
	clk clock.PassiveClock
}

// Decorate wraps cp so that every call records its duration and error kind in m.
func Decorate(cp cloudprovider.CloudProvider, m *Metrics, clk clock.PassiveClock) cloudprovider.CloudProvider {
	for _, method := range []string{MethodCreate, MethodDelete, MethodGet, MethodList, MethodInstanceTypes, MethodIsDrifted} {
		for _, kind := range []string{ErrorInsufficientCapacity, ErrorNodeClaimNotFound, ErrorNodeClassNotReady, ErrorCreate, ErrorOther} {
			m.Errors.WithLabelValues(method, cp.Name(), kind) // pre-initialise the series at 0
		}
	}
	return &decorator{CloudProvider: cp, m: m, clk: clk}
}

func (d *decorator) observe(method string, start func() error) error {
	began := d.clk.Now()
	err := start()
	d.m.Duration.WithLabelValues(method, d.Name()).Observe(d.clk.Since(began).Seconds())
	if kind := ErrorKind(err); kind != ErrorNone {
		d.m.Errors.WithLabelValues(method, d.Name(), kind).Inc()
	}
	return err
}

// ErrorKind maps an error to its label value under the CloudProvider error contract.
func ErrorKind(err error) string {
	switch {
	case err == nil:
		return ErrorNone
	case cloudprovider.IsInsufficientCapacityError(err):
		return ErrorInsufficientCapacity
	case cloudprovider.IsNodeClaimNotFoundError(err):
		return ErrorNodeClaimNotFound
	case cloudprovider.IsNodeClassNotReadyError(err):
		return ErrorNodeClassNotReady
	case cloudprovider.IsCreateError(err):
		return ErrorCreate
	}
	return ErrorOther
}

func (d *decorator) Create(ctx context.Context, claim *v1alpha1.NodeClaim) (out *v1alpha1.NodeClaim, err error) {
	err = d.observe(MethodCreate, func() error { out, err = d.CloudProvider.Create(ctx, claim); return err })
	return out, err
}

func (d *decorator) Delete(ctx context.Context, claim *v1alpha1.NodeClaim) error {
	return d.observe(MethodDelete, func() error { return d.CloudProvider.Delete(ctx, claim) })
}

func (d *decorator) Get(ctx context.Context, providerID string) (out *v1alpha1.NodeClaim, err error) {
	err = d.observe(MethodGet, func() error { out, err = d.CloudProvider.Get(ctx, providerID); return err })
	return out, err
}

func (d *decorator) List(ctx context.Context) (out []*v1alpha1.NodeClaim, err error) {
	err = d.observe(MethodList, func() error { out, err = d.CloudProvider.List(ctx); return err })
	return out, err
}

func (d *decorator) InstanceTypes(ctx context.Context, pool *v1alpha1.NodePool) (out []*cloudprovider.InstanceType, err error) {
	err = d.observe(MethodInstanceTypes, func() error { out, err = d.CloudProvider.InstanceTypes(ctx, pool); return err })
	return out, err
}

func (d *decorator) IsDrifted(ctx context.Context, claim *v1alpha1.NodeClaim) (out cloudprovider.DriftReason, err error) {
	err = d.observe(MethodIsDrifted, func() error { out, err = d.CloudProvider.IsDrifted(ctx, claim); return err })
	return out, err
}
