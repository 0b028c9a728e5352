package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/testbed"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// benchRecords is how many spot warnings each round puts on the queue.
const benchRecords = 200

// benchNodes counts the Nodes the benchmark created, for their instance ids.
var benchNodes int

// BenchmarkInterruptionLambdaMark measures, on the bed, the time from the
// event source mapping taking a record off the SQS queue to the
// interrupted taint on its Node, as a watch sees it: the Lambda's bootstrap
// under RIE, its EKS token, the Node lookup and the update. Each round puts
// benchRecords spot warnings for as many Nodes on the queue at once (a spot
// market reclaiming capacity), then enables the mapping, which hands them
// over in batches of ten. The container is warmed by one record first; its
// cold start is reported apart. cpu_seconds is the Lambda's (RIE and
// bootstrap), test_cpu_seconds this process's (emulator, watch).
func BenchmarkInterruptionLambdaMark(b *testing.B) {
	testenv.RequireAssets(b, testenv.LambdaRIE)
	zip, err := testbed.BuildLambdaZip(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	bd := startBed(b, testbed.Options{})
	ctx := context.Background()
	l, err := bd.StartLambda(ctx, testbed.LambdaOptions{Zip: zip})
	if err != nil {
		b.Fatal(err)
	}
	taints := watchTaints(b, bd)
	cold := bd.markRound(b, l, taints, "warm", 1)
	var latencies []time.Duration
	lambdaCPU0, cpu0 := processTreeCPUSeconds(l.Runtime.PIDs()), cpuSeconds()
	b.ResetTimer()
	for round := range b.N {
		latencies = append(latencies, bd.markRound(b, l, taints, fmt.Sprintf("r%d", round), benchRecords)...)
	}
	b.StopTimer()
	lambdaCPU, cpu := processTreeCPUSeconds(l.Runtime.PIDs())-lambdaCPU0, cpuSeconds()-cpu0
	slices.Sort(latencies)
	fmt.Printf("BENCH lambda=mark records=%d p50=%.3fs p99=%.3fs max=%.3fs cold_start=%.3fs cpu_seconds=%.3f test_cpu_seconds=%.3f\n",
		len(latencies), quantile(latencies, 0.50).Seconds(), quantile(latencies, 0.99).Seconds(),
		latencies[len(latencies)-1].Seconds(), cold[0].Seconds(), lambdaCPU, cpu)
}

// markRound creates n Nodes, queues a spot warning for each with the
// mapping disabled, enables it, and returns each record's time from its
// delivery to its Node's taint.
func (b *bed) markRound(tb testing.TB, l *testbed.Lambda, taints *taintWatch, round string, n int) []time.Duration {
	ctx := context.Background()
	if err := setMapping(ctx, l, false); err != nil {
		tb.Fatal(err)
	}
	byMessage := map[string]string{}
	q := sqs.NewFromConfig(l.AWS)
	for i := range n {
		benchNodes++
		id := fmt.Sprintf("i-0be%014x", benchNodes)
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "bench-" + round + "-" + strconv.Itoa(i)},
			Spec: corev1.NodeSpec{ProviderID: "aws:///us-east-1a/" + id}}
		b.create(node)
		body := fmt.Sprintf(`{"version":"0","id":"%s-%d","detail-type":"EC2 Spot Instance Interruption Warning","source":"aws.ec2",`+
			`"account":"123456789012","time":"%s","region":"us-east-1","resources":[],"detail":{"instance-id":"%s","instance-action":"terminate"}}`,
			round, i, time.Now().UTC().Format(time.RFC3339), id)
		out, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(l.QueueURL), MessageBody: aws.String(body)})
		if err != nil {
			tb.Fatal(err)
		}
		byMessage[aws.ToString(out.MessageId)] = node.Name
	}
	if err := setMapping(ctx, l, true); err != nil {
		tb.Fatal(err)
	}
	var out []time.Duration
	b.eventually(settle, func() error {
		out = out[:0]
		for _, inv := range b.Emulator.Invocations(l.MappingUUID) {
			for _, id := range inv.MessageIDs {
				if node, ok := byMessage[id]; ok {
					if at, tainted := taints.at(node); tainted {
						out = append(out, at.Sub(inv.Received))
					}
				}
			}
		}
		if len(out) < n {
			return fmt.Errorf("%d of %d nodes tainted", len(out), n)
		}
		return nil
	})
	return out
}

func setMapping(ctx context.Context, l *testbed.Lambda, enabled bool) error {
	if enabled {
		return l.EnableMapping(ctx)
	}
	return l.DisableMapping(ctx)
}

// taintWatch records when each Node first carried the interrupted taint.
type taintWatch struct {
	mu      sync.Mutex
	tainted map[string]time.Time
}

func watchTaints(tb testing.TB, b *bed) *taintWatch {
	cs, err := kubernetes.NewForConfig(b.ControlPlane.Config)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	w, err := cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	tw := &taintWatch{tainted: map[string]time.Time{}}
	go func() {
		for ev := range w.ResultChan() {
			node, ok := ev.Object.(*corev1.Node)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			now := time.Now()
			tw.mu.Lock()
			if _, seen := tw.tainted[node.Name]; !seen && slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool {
				return t.Key == v1alpha1.TaintKeyInterrupted
			}) {
				tw.tainted[node.Name] = now
			}
			tw.mu.Unlock()
		}
	}()
	return tw
}

func (tw *taintWatch) at(node string) (time.Time, bool) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	t, ok := tw.tainted[node]
	return t, ok
}

// processTreeCPUSeconds sums the user and system CPU time of the processes
// and their children (RIE and the bootstrap it runs), from /proc.
func processTreeCPUSeconds(roots []int) float64 {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	parent, ticks := map[int]int{}, map[int]int64{}
	for _, path := range stats {
		data, err := os.ReadFile(path)
		end := strings.LastIndexByte(string(data), ')')
		if err != nil || end < 0 {
			continue
		}
		f := strings.Fields(string(data[end+1:]))
		if len(f) < 13 {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		ppid, _ := strconv.Atoi(f[1])
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		parent[pid], ticks[pid] = ppid, utime+stime
	}
	var sum int64
	for pid, t := range ticks {
		for p := pid; p > 1; p = parent[p] {
			if slices.Contains(roots, p) {
				sum += t
				break
			}
		}
	}
	return float64(sum) / clockTicks
}
