// Package metricsref documents every Prometheus metric `stowage run`
// registers, read from the registries themselves rather than from a list, so
// that a metric added to any controller's metrics.go shows up with no edit
// here: docs/guides/metrics.md is generated from it (make docs) and a test
// fails when the page and the code disagree.
package metricsref

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	// The AWS cloud provider `stowage run` builds registers its own metrics.
	_ "github.com/stowage-dev/stowage/controller/aws"
	// stowage run's build info, which its main registers.
	_ "github.com/stowage-dev/stowage/controller/buildinfo"
	cpmetrics "github.com/stowage-dev/stowage/controller/cloudprovider/metrics"
	// The operator imports every controller `stowage run` wires, and with
	// them the metrics their packages register.
	_ "github.com/stowage-dev/stowage/controller/operator"
)

// Prefix is what Stowage's own metrics start with.
const Prefix = "stowage_"

// Metric is one metric family as registered.
type Metric struct {
	Name, Type, Help string
	Labels           []string
}

// Collect returns every stowage_ metric `stowage run` registers, by name:
// those the controllers' packages register with controller-runtime's
// registry, and the cloud provider decorator's, which the operator
// registers when it starts.
func Collect() ([]Metric, error) {
	global, ok := crmetrics.Registry.(*prometheus.Registry)
	if !ok {
		return nil, fmt.Errorf("controller-runtime's registry is a %T, not a *prometheus.Registry", crmetrics.Registry)
	}
	cloud := prometheus.NewRegistry()
	cpmetrics.New(cloud)
	var out []Metric
	for _, reg := range []*prometheus.Registry{global, cloud} {
		ms, err := describe(reg)
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	// Once an operator has started in this process, the cloud metrics are in
	// both registries.
	out = slices.CompactFunc(out, func(a, b Metric) bool { return a.Name == b.Name })
	return out, nil
}

// describe reads the descriptors of reg's stowage_ collectors.
func describe(reg *prometheus.Registry) ([]Metric, error) {
	// Describe holds the registry's lock: read every descriptor first.
	ch := make(chan *prometheus.Desc)
	go func() { reg.Describe(ch); close(ch) }()
	var descs []*prometheus.Desc
	for d := range ch {
		descs = append(descs, d)
	}
	var out []Metric
	var errs []error
	for _, d := range descs {
		m, err := parseDesc(d)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !strings.HasPrefix(m.Name, Prefix) {
			continue
		}
		if m.Type, err = metricType(reg, d); err != nil {
			errs = append(errs, err)
		}
		out = append(out, m)
	}
	return out, errors.Join(errs...)
}

var descPattern = regexp.MustCompile(`^Desc\{fqName: ("(?:[^"\\]|\\.)*"), help: ("(?:[^"\\]|\\.)*"), .*variableLabels: \{([^}]*)\}\}$`)

// parseDesc reads a descriptor's name, help and variable labels from its
// String form, the only way client_golang exposes them.
func parseDesc(d *prometheus.Desc) (Metric, error) {
	m := descPattern.FindStringSubmatch(d.String())
	if m == nil {
		return Metric{}, fmt.Errorf("reading the descriptor %s: client_golang changed its String form; update descPattern", d)
	}
	name, err1 := strconv.Unquote(m[1])
	help, err2 := strconv.Unquote(m[2])
	if err := errors.Join(err1, err2); err != nil {
		return Metric{}, fmt.Errorf("reading the descriptor %s: %w", d, err)
	}
	var labels []string
	if m[3] != "" {
		labels = strings.Split(m[3], ",")
	}
	return Metric{Name: name, Help: help, Labels: labels}, nil
}

// descOnly is a collector of one descriptor: registering it where the
// metric is registered returns the metric's own collector.
type descOnly struct{ d *prometheus.Desc }

func (c descOnly) Describe(ch chan<- *prometheus.Desc) { ch <- c.d }
func (c descOnly) Collect(chan<- prometheus.Metric)    {}

// metricType finds the collector that registered d (client_golang hands it
// back as an AlreadyRegisteredError) and says what kind of metric it is.
func metricType(reg *prometheus.Registry, d *prometheus.Desc) (string, error) {
	err := reg.Register(descOnly{d})
	var are prometheus.AlreadyRegisteredError
	if !errors.As(err, &are) {
		if err == nil {
			reg.Unregister(descOnly{d})
		}
		return "", fmt.Errorf("finding the collector of %s: %v", d, err)
	}
	switch are.ExistingCollector.(type) {
	case *prometheus.CounterVec:
		return "counter", nil
	case *prometheus.GaugeVec:
		return "gauge", nil
	case *prometheus.HistogramVec:
		return "histogram", nil
	case *prometheus.SummaryVec:
		return "summary", nil
	}
	return sampleType(are.ExistingCollector, d)
}

// sampleType reads the kind of a collector without labels from its sample.
func sampleType(c prometheus.Collector, d *prometheus.Desc) (string, error) {
	ch := make(chan prometheus.Metric, 16)
	go func() { c.Collect(ch); close(ch) }()
	kind := ""
	for m := range ch {
		var pb dto.Metric
		if m.Desc() != d || m.Write(&pb) != nil {
			continue
		}
		switch {
		case pb.Counter != nil:
			kind = "counter"
		case pb.Gauge != nil:
			kind = "gauge"
		case pb.Histogram != nil:
			kind = "histogram"
		case pb.Summary != nil:
			kind = "summary"
		}
	}
	if kind == "" {
		return "", fmt.Errorf("%s: a collector of type %T whose kind cannot be read; document how it is built", d, c)
	}
	return kind, nil
}
