package e2e_test

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// apiRequestDuration is kube-apiserver's request latency histogram.
const apiRequestDuration = "apiserver_request_duration_seconds"

// longRunning are the verbs whose requests stay open (watches, exec and
// proxy connections): their durations say nothing of the API's latency, and
// the Kubernetes API call latency SLO leaves them out.
var longRunning = map[string]bool{"WATCH": true, "WATCHLIST": true, "CONNECT": true}

// latencyHistogram is a cumulative histogram: counts[i] requests took at
// most bounds[i] seconds; the last bound is +Inf. slow counts, per verb and
// resource, the requests above slowAbove, to say which were slow.
type latencyHistogram struct {
	bounds, counts []float64
	slow           map[string]float64
}

// slowAbove is the latency in seconds above which slow counts a request:
// the bed envelope's stop rule.
var slowAbove = envelopeAPIP99.Seconds()

// apiLatency reads kube-apiserver's /metrics and sums its request latency
// histogram over every series but the long-running verbs'.
func apiLatency(ctx context.Context, cfg *rest.Config) (latencyHistogram, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return latencyHistogram{}, err
	}
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return latencyHistogram{}, fmt.Errorf("reading kube-apiserver's /metrics: %w", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(raw)))
	if err != nil {
		return latencyHistogram{}, fmt.Errorf("parsing kube-apiserver's /metrics: %w", err)
	}
	mf, ok := families[apiRequestDuration]
	if !ok {
		return latencyHistogram{}, fmt.Errorf("kube-apiserver's /metrics has no %s", apiRequestDuration)
	}
	return sumHistograms(mf), nil
}

// sumHistograms adds up the buckets of every series of mf except the
// long-running verbs'; the series share their bounds, as one histogram's do.
func sumHistograms(mf *dto.MetricFamily) latencyHistogram {
	byBound, slow := map[float64]float64{}, map[string]float64{}
	for _, m := range mf.GetMetric() {
		if longRunning[labelValue(m, "verb")] || m.GetHistogram() == nil {
			continue
		}
		fast := 0.0
		for _, bk := range m.GetHistogram().GetBucket() {
			if !math.IsInf(bk.GetUpperBound(), 1) {
				byBound[bk.GetUpperBound()] += float64(bk.GetCumulativeCount())
			}
			if bk.GetUpperBound() <= slowAbove {
				fast = float64(bk.GetCumulativeCount())
			}
		}
		byBound[math.Inf(1)] += float64(m.GetHistogram().GetSampleCount())
		slow[labelValue(m, "verb")+" "+labelValue(m, "resource")] += float64(m.GetHistogram().GetSampleCount()) - fast
	}
	h := latencyHistogram{slow: slow}
	for _, bound := range slices.Sorted(maps.Keys(byBound)) {
		h.bounds, h.counts = append(h.bounds, bound), append(h.counts, byBound[bound])
	}
	return h
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// minus is the requests counted in h and not in earlier: those of the
// interval between the two readings.
func (h latencyHistogram) minus(earlier latencyHistogram) latencyHistogram {
	out := latencyHistogram{bounds: h.bounds, counts: make([]float64, len(h.counts)), slow: map[string]float64{}}
	for i := range h.counts {
		out.counts[i] = h.counts[i]
		if i < len(earlier.counts) {
			out.counts[i] -= earlier.counts[i]
		}
	}
	for k, n := range h.slow {
		if n -= earlier.slow[k]; n > 0 {
			out.slow[k] = n
		}
	}
	return out
}

// slowest names the verb and resource with the most requests above
// slowAbove, and how many; "" when none was.
func (h latencyHistogram) slowest() (series string, n float64) {
	for _, k := range slices.Sorted(maps.Keys(h.slow)) {
		if h.slow[k] > n {
			series, n = k, h.slow[k]
		}
	}
	return series, n
}

// quantile estimates the q-quantile in seconds as Prometheus's
// histogram_quantile does: linearly within the bucket the rank falls in
// (from 0 for the first), the last finite bound when it falls in +Inf; 0
// for no requests.
func (h latencyHistogram) quantile(q float64) float64 {
	if len(h.counts) == 0 || h.counts[len(h.counts)-1] == 0 {
		return 0
	}
	rank := q * h.counts[len(h.counts)-1]
	for i, c := range h.counts {
		if c < rank {
			continue
		}
		if math.IsInf(h.bounds[i], 1) {
			return h.bounds[max(i-1, 0)]
		}
		lower, below := 0.0, 0.0
		if i > 0 {
			lower, below = h.bounds[i-1], h.counts[i-1]
		}
		if c == below {
			return h.bounds[i]
		}
		return lower + (h.bounds[i]-lower)*(rank-below)/(c-below)
	}
	return h.bounds[len(h.bounds)-1]
}

// apiMetrics is kube-apiserver's exposition of two request series and a
// watch: 100 GETs (90 within 0.1 s, the rest within 1 s), 100 LISTs (all
// within 0.1 s, 10 within 0.05 s) and 10 WATCHes of a minute.
const apiMetrics = `# HELP apiserver_request_duration_seconds Response latency distribution in seconds for each verb.
# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{resource="pods",verb="GET",le="0.05"} 0
apiserver_request_duration_seconds_bucket{resource="pods",verb="GET",le="0.1"} 90
apiserver_request_duration_seconds_bucket{resource="pods",verb="GET",le="1"} 100
apiserver_request_duration_seconds_bucket{resource="pods",verb="GET",le="60"} 100
apiserver_request_duration_seconds_bucket{resource="pods",verb="GET",le="+Inf"} 100
apiserver_request_duration_seconds_sum{resource="pods",verb="GET"} 12
apiserver_request_duration_seconds_count{resource="pods",verb="GET"} 100
apiserver_request_duration_seconds_bucket{resource="nodes",verb="LIST",le="0.05"} 10
apiserver_request_duration_seconds_bucket{resource="nodes",verb="LIST",le="0.1"} 100
apiserver_request_duration_seconds_bucket{resource="nodes",verb="LIST",le="1"} 100
apiserver_request_duration_seconds_bucket{resource="nodes",verb="LIST",le="60"} 100
apiserver_request_duration_seconds_bucket{resource="nodes",verb="LIST",le="+Inf"} 100
apiserver_request_duration_seconds_sum{resource="nodes",verb="LIST"} 7
apiserver_request_duration_seconds_count{resource="nodes",verb="LIST"} 100
apiserver_request_duration_seconds_bucket{resource="pods",verb="WATCH",le="0.05"} 0
apiserver_request_duration_seconds_bucket{resource="pods",verb="WATCH",le="0.1"} 0
apiserver_request_duration_seconds_bucket{resource="pods",verb="WATCH",le="1"} 0
apiserver_request_duration_seconds_bucket{resource="pods",verb="WATCH",le="60"} 10
apiserver_request_duration_seconds_bucket{resource="pods",verb="WATCH",le="+Inf"} 10
apiserver_request_duration_seconds_sum{resource="pods",verb="WATCH"} 600
apiserver_request_duration_seconds_count{resource="pods",verb="WATCH"} 10
`

// TestAPILatencyQuantilesLeaveOutWatches checks the p99 and p50 of the 200
// requests above by histogram_quantile's rule, worked by hand: the watches
// are left out, else the p99 would be near a minute.
func TestAPILatencyQuantilesLeaveOutWatches(t *testing.T) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(apiMetrics))
	if err != nil {
		t.Fatal(err)
	}
	h := sumHistograms(families[apiRequestDuration])
	for _, tc := range []struct {
		q, want float64
	}{
		// rank 198 of 200: between 190 (le 0.1) and 200 (le 1): 0.1 + 0.9 * 8/10.
		{0.99, 0.82},
		// rank 100: between 10 (le 0.05) and 190 (le 0.1): 0.05 + 0.05 * 90/180.
		{0.5, 0.075},
		// rank 4: in the first bucket, from 0: 0.05 * 4/10.
		{0.02, 0.02},
	} {
		if got := h.quantile(tc.q); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("quantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	// Between two readings only the requests in between count.
	earlier := sumHistograms(families[apiRequestDuration])
	later := latencyHistogram{bounds: h.bounds, counts: append([]float64(nil), h.counts...)}
	for i := range later.counts {
		later.counts[i] += 100 // 100 more requests, all within 0.05 s
	}
	if got := later.minus(earlier).quantile(0.99); math.Abs(got-0.0495) > 1e-9 {
		t.Errorf("p99 of the interval = %v, want 0.0495 (0.05 * 99/100)", got)
	}
	// The GETs' 10 requests above 0.1 s are within 1 s: none is slow; of the
	// interval's, none either.
	if series, n := h.slowest(); series != "" || n != 0 {
		t.Errorf("slowest = %q with %v requests above 1 s, want none", series, n)
	}
	if got := (latencyHistogram{}).quantile(0.99); got != 0 {
		t.Errorf("p99 of no requests = %v, want 0", got)
	}
}

// slowMetrics has 3 POSTs of nodeclaims and 1 LIST of pods above 1 s, and
// watches of a minute.
const slowMetrics = `# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{resource="nodeclaims",verb="POST",le="1"} 7
apiserver_request_duration_seconds_bucket{resource="nodeclaims",verb="POST",le="2"} 9
apiserver_request_duration_seconds_bucket{resource="nodeclaims",verb="POST",le="+Inf"} 10
apiserver_request_duration_seconds_sum{resource="nodeclaims",verb="POST"} 15
apiserver_request_duration_seconds_count{resource="nodeclaims",verb="POST"} 10
apiserver_request_duration_seconds_bucket{resource="pods",verb="LIST",le="1"} 9
apiserver_request_duration_seconds_bucket{resource="pods",verb="LIST",le="2"} 10
apiserver_request_duration_seconds_bucket{resource="pods",verb="LIST",le="+Inf"} 10
apiserver_request_duration_seconds_sum{resource="pods",verb="LIST"} 5
apiserver_request_duration_seconds_count{resource="pods",verb="LIST"} 10
apiserver_request_duration_seconds_bucket{resource="pods",verb="WATCH",le="1"} 0
apiserver_request_duration_seconds_bucket{resource="pods",verb="WATCH",le="2"} 0
apiserver_request_duration_seconds_bucket{resource="pods",verb="WATCH",le="+Inf"} 20
apiserver_request_duration_seconds_sum{resource="pods",verb="WATCH"} 1200
apiserver_request_duration_seconds_count{resource="pods",verb="WATCH"} 20
`

// TestAPILatencySlowestNamesTheSeries checks that the envelope names the
// verb and resource with the most requests above 1 s, leaving out watches,
// and counts only those of the interval.
func TestAPILatencySlowestNamesTheSeries(t *testing.T) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(slowMetrics))
	if err != nil {
		t.Fatal(err)
	}
	h := sumHistograms(families[apiRequestDuration])
	if series, n := h.slowest(); series != "POST nodeclaims" || n != 3 {
		t.Errorf("slowest = %q with %v requests above 1 s, want POST nodeclaims with 3", series, n)
	}
	earlier := latencyHistogram{slow: map[string]float64{"POST nodeclaims": 3}}
	if series, n := h.minus(earlier).slowest(); series != "LIST pods" || n != 1 {
		t.Errorf("slowest of the interval = %q with %v, want LIST pods with 1", series, n)
	}
}
