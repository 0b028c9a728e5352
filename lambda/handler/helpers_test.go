package handler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/hashicorp/go-hclog"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/lambda/handler"
	"github.com/stowage-dev/stowage/lambda/marker"
	"github.com/stowage-dev/stowage/lambda/messages/registry"
)

const testdata = "../testdata"

// now is the fake clock's time.
var now = time.Date(2026, 11, 1, 2, 0, 30, 0, time.UTC)

// env is a handler over a fake API server holding Nodes, with its logs and
// metrics kept, and a count of the writes to each Node.
type env struct {
	t       *testing.T
	kube    client.Client
	h       *handler.Handler
	logs    *bytes.Buffer
	metrics *bytes.Buffer

	mu      sync.Mutex
	updates map[string]int   // node name -> updates
	fail    map[string]error // node name -> error its next update returns
}

func newEnv(t *testing.T, cfg handler.Config, nodes ...*corev1.Node) *env {
	t.Helper()
	e := &env{t: t, logs: &bytes.Buffer{}, metrics: &bytes.Buffer{}, updates: map[string]int{}, fail: map[string]error{}}
	objs := make([]client.Object, 0, len(nodes))
	for _, n := range nodes {
		objs = append(objs, n)
	}
	e.kube = fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(objs...).
		WithInterceptorFuncs(interceptor.Funcs{Update: e.update}).Build()
	e.h = e.handler(cfg)
	return e
}

func (e *env) handler(cfg handler.Config) *handler.Handler {
	log := hclog.New(&hclog.LoggerOptions{Output: e.logs, JSONFormat: true, Level: hclog.Debug})
	requests := 0
	return handler.New(registry.New(), marker.New(e.kube), clocktesting.NewFakeClock(now), cfg, handler.Options{
		Logger: log, Metrics: e.metrics, Workers: 4,
		RequestID: func(context.Context) string { requests++; return fmt.Sprintf("req-%d", requests) },
	})
}

func scheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func (e *env) update(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
	e.mu.Lock()
	err := e.fail[obj.GetName()]
	delete(e.fail, obj.GetName())
	if err == nil {
		e.updates[obj.GetName()]++
	}
	e.mu.Unlock()
	if err != nil {
		return err
	}
	return c.Update(ctx, obj, opts...)
}

func (e *env) writes(node string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.updates[node]
}

// failNext makes the next update of the Node fail with err.
func (e *env) failNext(node string, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fail[node] = err
}

func (e *env) node(name string) *corev1.Node {
	e.t.Helper()
	n := &corev1.Node{}
	if err := e.kube.Get(context.Background(), client.ObjectKey{Name: name}, n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// nodeFor is a Node of the instance, named after it.
func nodeFor(instanceID string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-" + instanceID, Labels: map[string]string{}},
		Spec:       corev1.NodeSpec{ProviderID: "aws:///us-east-1a/" + instanceID},
	}
}

// inReservation labels a Node as Stowage labels one launched into a capacity reservation.
func inReservation(n *corev1.Node, reservationID string) *corev1.Node {
	n.Labels[v1alpha1.LabelCapacityReservationID] = reservationID
	return n
}

func sample(t *testing.T, name string) []byte {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(testdata, name))
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// batch wraps bodies as the SQS records of one batch, message ids m-0, m-1...
func batch(bodies ...[]byte) events.SQSEvent {
	var ev events.SQSEvent
	for i, b := range bodies {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: fmt.Sprintf("m-%d", i), Body: string(b),
			EventSource: "aws:sqs", EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:interruptions", AWSRegion: "us-east-1"})
	}
	return ev
}

func failedIDs(resp events.SQSEventResponse) []string {
	out := []string{}
	for _, f := range resp.BatchItemFailures {
		out = append(out, f.ItemIdentifier)
	}
	return out
}

// logLines decodes every log line.
func (e *env) logLines() []map[string]any {
	e.t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(e.logs.String()), "\n") {
		if line == "" {
			continue
		}
		m := map[string]any{}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			e.t.Fatalf("log line %q is not JSON: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// emf decodes the metric lines: kind -> metric -> value, summed over lines.
func (e *env) emf() map[string]map[string]float64 {
	e.t.Helper()
	out := map[string]map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(e.metrics.String()), "\n") {
		if line == "" {
			continue
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(line), &doc); err != nil {
			e.t.Fatalf("metric line %q is not JSON: %v", line, err)
		}
		checkEMF(e.t, doc)
		kind, _ := doc[handler.DimensionKind].(string)
		if out[kind] == nil {
			out[kind] = map[string]float64{}
		}
		for _, name := range []string{handler.MetricReceived, handler.MetricMarked, handler.MetricIgnored, handler.MetricFailed} {
			v, _ := doc[name].(float64)
			out[kind][name] += v
		}
	}
	return out
}

// checkEMF checks the embedded-metric-format directive of one line.
func checkEMF(t *testing.T, doc map[string]any) {
	t.Helper()
	meta, ok := doc["_aws"].(map[string]any)
	if !ok {
		t.Fatalf("metric line %v has no _aws metadata", doc)
	}
	if ts, _ := meta["Timestamp"].(float64); int64(ts) != now.UnixMilli() {
		t.Errorf("EMF timestamp %v, want the clock's %d", meta["Timestamp"], now.UnixMilli())
	}
	directives, _ := meta["CloudWatchMetrics"].([]any)
	if len(directives) != 1 {
		t.Fatalf("EMF directives %v, want one", directives)
	}
	d, _ := directives[0].(map[string]any)
	if d["Namespace"] != handler.MetricsNamespace || fmt.Sprint(d["Dimensions"]) != "[[kind]]" {
		t.Errorf("EMF directive %v, want namespace %s and dimension kind", d, handler.MetricsNamespace)
	}
	metrics, _ := d["Metrics"].([]any)
	for _, m := range metrics {
		name, _ := m.(map[string]any)["Name"].(string)
		if _, ok := doc[name]; !ok {
			t.Errorf("EMF metric %s has no value on the line", name)
		}
	}
}
