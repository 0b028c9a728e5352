package handler

import (
	"encoding/json"
	"io"
	"slices"
	"time"
)

// The metrics, written as CloudWatch embedded-metric-format lines: one line
// per kind seen in an invocation, in the namespace Stowage with the
// dimension kind (an interruption kind, or none, unknown, malformed). No
// CloudWatch API call is made: Lambda's log delivery turns them into metrics.
const (
	MetricsNamespace = "Stowage"
	// MetricReceived counts records received.
	MetricReceived = "stowage_lambda_received_total"
	// MetricMarked counts records that marked at least one Node.
	MetricMarked = "stowage_lambda_marked_total"
	// MetricIgnored counts records acknowledged without a change: unknown
	// events, events asking for nothing, instances without a Node, marks
	// already there.
	MetricIgnored = "stowage_lambda_ignored_total"
	// MetricFailed counts records reported as failed, for SQS to deliver again.
	MetricFailed = "stowage_lambda_failed_total"
	// DimensionKind is the metrics' one dimension.
	DimensionKind = "kind"
)

var metricNames = []string{MetricReceived, MetricMarked, MetricIgnored, MetricFailed}

// tally counts one invocation's records by kind and result.
type tally map[string]map[string]int // kind -> metric -> count

func newTally() tally { return tally{} }

func (t tally) add(o outcome) {
	counts, ok := t[o.kind]
	if !ok {
		counts = map[string]int{}
		t[o.kind] = counts
	}
	counts[MetricReceived]++
	counts[map[string]string{resultMarked: MetricMarked, resultIgnored: MetricIgnored, resultFailed: MetricFailed}[o.result]]++
}

type emfMetric struct {
	Name string `json:"Name"`
	Unit string `json:"Unit"`
}

type emfDirective struct {
	Namespace  string      `json:"Namespace"`
	Dimensions [][]string  `json:"Dimensions"`
	Metrics    []emfMetric `json:"Metrics"`
}

type emfMetadata struct {
	Timestamp         int64          `json:"Timestamp"`
	CloudWatchMetrics []emfDirective `json:"CloudWatchMetrics"`
}

// write prints one EMF line per kind, kinds in order.
func (t tally) write(w io.Writer, now time.Time, requestID string) {
	metrics := make([]emfMetric, 0, len(metricNames))
	for _, name := range metricNames {
		metrics = append(metrics, emfMetric{Name: name, Unit: "Count"})
	}
	meta := emfMetadata{Timestamp: now.UnixMilli(), CloudWatchMetrics: []emfDirective{{
		Namespace: MetricsNamespace, Dimensions: [][]string{{DimensionKind}}, Metrics: metrics}}}
	kinds := make([]string, 0, len(t))
	for kind := range t {
		kinds = append(kinds, kind)
	}
	slices.Sort(kinds)
	for _, kind := range kinds {
		line := map[string]any{"_aws": meta, DimensionKind: kind, "request_id": requestID}
		for _, name := range metricNames {
			line[name] = t[kind][name]
		}
		out, err := json.Marshal(line)
		if err != nil {
			continue // maps of strings and ints always encode
		}
		_, _ = w.Write(append(out, '\n'))
	}
}
