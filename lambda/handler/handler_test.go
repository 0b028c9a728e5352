package handler_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/interruption"
	"github.com/stowage-dev/stowage/lambda/handler"
	"github.com/stowage-dev/stowage/lambda/messages"
	"github.com/stowage-dev/stowage/lambda/messages/registry"
)

// TestEverySampleThroughTheSQSPath delivers each sample in testdata as a
// one-record batch, with a Node for every instance the event names, two in
// the capacity reservation it names, and one for an instance and one in a
// reservation it does not: a malformed record is the batch's only
// failure and writes nothing; an event asking for nothing writes nothing;
// any other marks exactly the named Nodes, once, with the event's kind,
// deadline and id.
func TestEverySampleThroughTheSQSPath(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testdata, "*.json"))
	for _, path := range files {
		name := filepath.Base(path)
		if strings.HasPrefix(name, "sqs-") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			body := sample(t, name)
			msg, parseErr := registry.New().Parse(body)
			nodes := []*corev1.Node{nodeFor("i-0ddddddddddddddd0"), inReservation(nodeFor("i-0eeeeeeeeeeeeeee0"), "cr-0eeeeeeeeeeeeeee0")}
			for _, id := range msg.InstanceIDs {
				nodes = append(nodes, nodeFor(id))
			}
			var inBlock []string // the Nodes of the reservation the event names
			for _, id := range []string{"i-0bbbbbbbbbbbbbbb1", "i-0bbbbbbbbbbbbbbb2"} {
				if msg.CapacityReservationID != "" {
					n := inReservation(nodeFor(id), msg.CapacityReservationID)
					nodes, inBlock = append(nodes, n), append(inBlock, n.Name)
				}
			}
			e := newEnv(t, handler.Config{Rebalance: handler.RebalanceMark}, nodes...)
			resp := e.h.HandleSQS(context.Background(), batch(body))
			var fe *messages.FieldError
			wantFailed := errors.As(parseErr, &fe)
			if got := failedIDs(resp); wantFailed != slices.Equal(got, []string{"m-0"}) || (!wantFailed && len(got) > 0) {
				t.Fatalf("failures %v; the parse said %v", got, parseErr)
			}
			if e.writes("node-i-0ddddddddddddddd0") != 0 || e.writes("node-i-0eeeeeeeeeeeeeee0") != 0 {
				t.Error("the Node of an instance or reservation the event does not name was written")
			}
			if parseErr != nil || msg.Kind == "" {
				for _, n := range nodes {
					if e.writes(n.Name) != 0 {
						t.Errorf("node %s written for an event asking for nothing", n.Name)
					}
				}
				return
			}
			for _, id := range msg.InstanceIDs {
				e.expectMark(nodeFor(id).Name, interruption.Mark{Kind: msg.Kind, Deadline: msg.Deadline, EventID: msg.EventID})
			}
			for _, name := range inBlock {
				e.expectMark(name, interruption.Mark{Kind: msg.Kind, Deadline: msg.Deadline, EventID: msg.EventID})
			}
			if m := e.emf()[msg.Kind]; m[handler.MetricMarked] != 1 || m[handler.MetricReceived] != 1 {
				t.Errorf("metrics for %s: %v, want one record received and marked", msg.Kind, m)
			}
		})
	}
}

// expectMark checks the Node carries the mark (and its taint) and was
// written once.
func (e *env) expectMark(name string, want interruption.Mark) {
	e.t.Helper()
	node := e.node(name)
	got, ok := interruption.Marks(node)
	if !ok || got.Kind != want.Kind || !got.Deadline.Equal(want.Deadline) || got.EventID != want.EventID {
		e.t.Errorf("node %s mark %+v, want %+v", name, got, want)
	}
	if !slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool {
		return t.Key == v1alpha1.TaintKeyInterrupted && t.Value == want.Kind && t.Effect == corev1.TaintEffectNoSchedule
	}) {
		e.t.Errorf("node %s taints %v lack the interrupted taint", name, node.Spec.Taints)
	}
	if n := e.writes(name); n != 1 {
		e.t.Errorf("node %s written %d times, want once", name, n)
	}
}

// TestAFailedRecordNeverAffectsTheOthers: in one batch, malformed records
// and a record whose write fails on the API server are reported failed;
// the records around them are marked, and delivering the failed ones again
// succeeds for the transient one.
func TestAFailedRecordNeverAffectsTheOthers(t *testing.T) {
	spot, stop := sample(t, "spot-interruption-terminate.json"), sample(t, "state-change-stopping.json")
	e := newEnv(t, handler.Config{}, nodeFor("i-0b662ef9931388ba0"), nodeFor("i-abcd1111"))
	e.failNext("node-i-abcd1111", apierrors.NewServiceUnavailable("etcd is busy"))
	resp := e.h.HandleSQS(context.Background(), batch(sample(t, "malformed-not-json.json"), spot,
		sample(t, "malformed-spot-no-instance-id.json"), stop, sample(t, "unknown-detail-type.json")))
	if got := failedIDs(resp); !slices.Equal(got, []string{"m-0", "m-2", "m-3"}) {
		t.Fatalf("failures %v, want the two malformed records and the one whose write failed", got)
	}
	if e.writes("node-i-0b662ef9931388ba0") != 1 {
		t.Error("the spot warning between the failures did not mark its node")
	}
	resp = e.h.HandleSQS(context.Background(), batch(stop))
	if len(resp.BatchItemFailures) != 0 || e.writes("node-i-abcd1111") != 1 {
		t.Errorf("redelivery: failures %v, %d writes; want the node marked", resp.BatchItemFailures, e.writes("node-i-abcd1111"))
	}
	m := e.emf()
	if m[handler.KindMalformed][handler.MetricFailed] != 2 || m[handler.KindUnknown][handler.MetricIgnored] != 1 ||
		m[v1alpha1.InterruptionKindInstanceStopping][handler.MetricFailed] != 1 {
		t.Errorf("metrics %v", m)
	}
	for kind, counts := range m {
		if counts[handler.MetricReceived] != counts[handler.MetricMarked]+counts[handler.MetricIgnored]+counts[handler.MetricFailed] {
			t.Errorf("kind %s: received %v is not marked + ignored + failed", kind, counts)
		}
	}
}

// TestRedeliveryChangesNothing: the same events delivered again write no Node.
func TestRedeliveryChangesNothing(t *testing.T) {
	bodies := [][]byte{sample(t, "spot-interruption-terminate.json"), sample(t, "health-scheduled-change-entities.json")}
	nodes := []*corev1.Node{nodeFor("i-0b662ef9931388ba0"), nodeFor("i-0aaaaaaaaaaaaaaa1"), nodeFor("i-0aaaaaaaaaaaaaaa2"), nodeFor("i-0aaaaaaaaaaaaaaa3")}
	e := newEnv(t, handler.Config{}, nodes...)
	for range 3 {
		if resp := e.h.HandleSQS(context.Background(), batch(bodies...)); len(resp.BatchItemFailures) != 0 {
			t.Fatalf("failures %v", resp.BatchItemFailures)
		}
	}
	for _, n := range nodes {
		if w := e.writes(n.Name); w != 1 {
			t.Errorf("node %s written %d times over three deliveries, want once", n.Name, w)
		}
	}
	if m := e.emf()[v1alpha1.InterruptionKindScheduledChange]; m[handler.MetricMarked] != 1 || m[handler.MetricIgnored] != 2 {
		t.Errorf("scheduled-change metrics %v, want 1 marked then 2 ignored", m)
	}
}

// TestConflictsAreReadAgain: an update that loses a race reads the Node
// again and marks it.
func TestConflictsAreReadAgain(t *testing.T) {
	e := newEnv(t, handler.Config{}, nodeFor("i-0b662ef9931388ba0"))
	e.failNext("node-i-0b662ef9931388ba0", apierrors.NewConflict(schema.GroupResource{Resource: "nodes"}, "node-i-0b662ef9931388ba0", errors.New("stale")))
	if resp := e.h.HandleSQS(context.Background(), batch(sample(t, "spot-interruption-terminate.json"))); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v after a conflict", resp.BatchItemFailures)
	}
	if _, ok := interruption.Marks(e.node("node-i-0b662ef9931388ba0")); !ok {
		t.Error("the node is not marked after a conflict")
	}
}

// TestAStaleIndexNeverSwallowsAnInterruption: a Node that registers, or is
// replaced under another name, after the index was built is found by the
// live list a miss makes; an instance without a Node is acknowledged.
func TestAStaleIndexNeverSwallowsAnInterruption(t *testing.T) {
	e := newEnv(t, handler.Config{}, nodeFor("i-abcd1111"))
	ctx := context.Background()
	e.h.HandleSQS(ctx, batch(sample(t, "state-change-stopping.json"))) // builds the index
	late := nodeFor("i-0b662ef9931388ba0")
	if err := e.kube.Create(ctx, late); err != nil {
		t.Fatal(err)
	}
	if resp := e.h.HandleSQS(ctx, batch(sample(t, "spot-interruption-terminate.json"), sample(t, "spot-interruption-stop.json"))); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v", resp.BatchItemFailures)
	}
	if e.writes(late.Name) != 1 {
		t.Error("a Node that registered after the index was built was not marked")
	}
	renamed := nodeFor("i-abcd1111")
	renamed.Name = "renamed"
	if err := e.kube.Delete(ctx, e.node("node-i-abcd1111")); err != nil {
		t.Fatal(err)
	}
	if err := e.kube.Create(ctx, renamed); err != nil {
		t.Fatal(err)
	}
	e.h.HandleSQS(ctx, batch(sample(t, "state-change-terminated.json"), sample(t, "state-change-shutting-down.json")))
	if got, _ := interruption.Marks(e.node("renamed")); got.Kind != v1alpha1.InterruptionKindInstanceTerminating {
		t.Errorf("the instance's Node under a new name has mark %+v, want instance-terminating", got)
	}
	if m := e.emf()[v1alpha1.InterruptionKindSpotInterruption]; m[handler.MetricIgnored] != 1 {
		t.Errorf("spot metrics %v: the instance without a Node should be ignored once", m)
	}
}

// TestRebalanceRecommendationsFollowTheSetting: ignored by default, marked
// with RebalanceMark.
func TestRebalanceRecommendationsFollowTheSetting(t *testing.T) {
	body := sample(t, "rebalance-recommendation.json")
	for cfg, want := range map[string]int{"": 0, handler.RebalanceIgnore: 0, handler.RebalanceMark: 1} {
		e := newEnv(t, handler.Config{Rebalance: cfg}, nodeFor("i-0b662ef9931388ba0"))
		e.h.HandleSQS(context.Background(), batch(body))
		if got := e.writes("node-i-0b662ef9931388ba0"); got != want {
			t.Errorf("rebalance %q: %d writes, want %d", cfg, got, want)
		}
	}
}

// TestInvokeTakesSQSAndEventBridgePayloads: the Lambda entry point reads
// the SQS event of the event source mapping (the sample of the Lambda
// guide) and a direct EventBridge invocation, whose failure is an error.
func TestInvokeTakesSQSAndEventBridgePayloads(t *testing.T) {
	e := newEnv(t, handler.Config{}, nodeFor("i-0b662ef9931388ba0"), nodeFor("i-abcd1111"))
	ctx := context.Background()
	out, err := e.h.Invoke(ctx, sample(t, "sqs-event-spot-interruption.json"))
	if raw, _ := json.Marshal(out); err != nil || string(raw) != `{"batchItemFailures":[]}` {
		t.Fatalf("SQS invocation: %s, %v; want an empty batchItemFailures", raw, err)
	}
	if e.writes("node-i-0b662ef9931388ba0") != 1 {
		t.Error("the SQS record did not mark its node")
	}
	if _, err := e.h.Invoke(ctx, sample(t, "state-change-stopped.json")); err != nil || e.writes("node-i-abcd1111") != 1 {
		t.Errorf("direct invocation: %v, %d writes; want the node marked", err, e.writes("node-i-abcd1111"))
	}
	_, err = e.h.Invoke(ctx, sample(t, "malformed-spot-bad-instance-id.json"))
	if err == nil || !strings.Contains(err.Error(), "detail.instance-id") {
		t.Errorf("malformed direct invocation: %v, want an error naming detail.instance-id", err)
	}
	if _, err := e.h.Invoke(ctx, []byte(`{"hello":"world"}`)); !errors.Is(err, handler.ErrUnknownPayload) {
		t.Errorf("foreign payload: %v, want ErrUnknownPayload", err)
	}
}

// TestEveryLogLineNamesTheRequestAndTheMessage checks the JSON logs of a
// mixed batch.
func TestEveryLogLineNamesTheRequestAndTheMessage(t *testing.T) {
	e := newEnv(t, handler.Config{}, nodeFor("i-0b662ef9931388ba0"))
	e.h.HandleSQS(context.Background(), batch(sample(t, "spot-interruption-terminate.json"), sample(t, "malformed-not-json.json"),
		sample(t, "state-change-running.json"), sample(t, "unknown-detail-type.json")))
	lines := e.logLines()
	if len(lines) < 4 {
		t.Fatalf("%d log lines, want one per record at least", len(lines))
	}
	for _, l := range lines {
		if l["request_id"] != "req-1" || !strings.HasPrefix(l["message_id"].(string), "m-") {
			t.Errorf("log line %v lacks request_id req-1 or a message_id", l)
		}
		if strings.Contains(l["@message"].(string), "this is not an EventBridge event") {
			t.Errorf("log line %v quotes the body", l)
		}
	}
}
