package metrics_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/cloudprovider/fake"
	"github.com/stowage-dev/stowage/controller/cloudprovider/metrics"
)

func TestDecoratorCountsErrorsByKind(t *testing.T) {
	cases := []struct {
		err  error
		kind string
	}{
		{cloudprovider.NewInsufficientCapacityError("short"), metrics.ErrorInsufficientCapacity},
		{cloudprovider.NewNodeClassNotReadyError(errors.New("x")), metrics.ErrorNodeClassNotReady},
		{cloudprovider.NewCreateError(errors.New("x"), "Unauthorized", "missing ec2:CreateFleet"), metrics.ErrorCreate},
		{errors.New("boom"), metrics.ErrorOther},
	}
	for _, tc := range cases {
		t.Run(tc.kind, func(t *testing.T) {
			m := metrics.New(prometheus.NewRegistry())
			f := fake.New()
			cp := metrics.Decorate(f, m, clocktesting.NewFakeClock(time.Unix(0, 0)))
			f.NextCreateErr = tc.err
			if _, err := cp.Create(context.Background(), &v1alpha1.NodeClaim{}); !errors.Is(err, tc.err) {
				t.Fatalf("error %v, want %v passed through", err, tc.err)
			}
			if got := counter(t, m.Errors.WithLabelValues(metrics.MethodCreate, "fake", tc.kind)); got != 1 {
				t.Fatalf("errors_total{%s} = %v, want 1", tc.kind, got)
			}
			if got := counter(t, m.Errors.WithLabelValues(metrics.MethodDelete, "fake", tc.kind)); got != 0 {
				t.Fatalf("pre-initialised Delete series = %v, want 0", got)
			}
		})
	}
}

func counter(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatalf("reading counter: %v", err)
	}
	return m.GetCounter().GetValue()
}
