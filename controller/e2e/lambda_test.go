package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testbed"
	"github.com/stowage-dev/stowage/internal/testenv"
	"github.com/stowage-dev/stowage/lambda/marker"
)

const lambdaNS = "interrupted"

// TestInterruptionLambdaEndToEnd runs the interruption path on real parts:
// Stowage running, a spot node with pods behind a PDB, and on the
// interruption queue every event EC2 and AWS Health raise for them and for
// instances Stowage does not manage (a spot warning, a rebalance, a
// termination's state changes, a scheduled change of two instances, a
// capacity reservation warning, a spot warning for an instance without a
// Node, the state changes of their launches), routed there by EventBridge's
// rules, then a redelivered duplicate and two malformed bodies sent
// straight to the queue. The event source mapping delivers them to the
// Lambda's bootstrap under RIE, which reaches the API server with EKS tokens
// of its role alone. Exactly the malformed records fail; the Nodes the
// events name are marked with their kind first and no other Node is; the
// interrupted spot node is replaced without losing a pod.
func TestInterruptionLambdaEndToEnd(t *testing.T) {
	testenv.RequireAssets(t, testenv.LambdaRIE)
	zip, err := testbed.BuildLambdaZip(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b := startBed(t, testbed.Options{})
	spot := b.spotNodeWithPods(t)
	l, err := b.StartLambda(context.Background(), testbed.LambdaOptions{Zip: zip, Rebalance: "mark", Disabled: true})
	if err != nil {
		t.Fatal(err)
	}
	s := b.launchStrangers(t, "rebalance", "terminating", "health-1", "health-2", "reserved")
	marks := watchMarks(t, b)
	events := b.raiseEvents(t, spot, s)
	malformed := b.queueDuplicateAndMalformed(t, l, events)
	avail := watchAvailability(t, b, spot.Name)
	queued := len(b.Emulator.QueueMessages(testbed.InterruptionQueue))
	if err := l.EnableMapping(context.Background()); err != nil {
		t.Fatal(err)
	}

	b.expectOnlyMalformedFailed(t, l, queued, events, malformed)
	want := map[string][]string{spot.Name: {v1alpha1.InterruptionKindSpotInterruption},
		s.nodes[0].Name: {v1alpha1.InterruptionKindRebalanceRecommendation},
		// shutting-down, then terminated: two events, two marks of the kind
		s.nodes[1].Name: {v1alpha1.InterruptionKindInstanceTerminating, v1alpha1.InterruptionKindInstanceTerminating},
		s.nodes[2].Name: {v1alpha1.InterruptionKindScheduledChange}, s.nodes[3].Name: {v1alpha1.InterruptionKindScheduledChange},
		s.nodes[4].Name: {v1alpha1.InterruptionKindCapacityReservationInterruption}}
	b.eventually(settle, func() error { return marks.markedFirst(want) })
	b.expectReplaced(t, spot, avail)
	expectLambdaLogs(t, l.Runtime.Logs())
}

// spotNodeWithPods runs three pods behind a PDB (two available at least) on
// a spot pool, and returns the Node holding most of them.
func (b *bed) spotNodeWithPods(t *testing.T) *corev1.Node {
	t.Helper()
	pool := nodePool()
	pool.Spec.Template.Spec.Requirements = []v1alpha1.NodeSelectorRequirementWithMinValues{
		{Key: v1alpha1.LabelCapacityType, Operator: v1alpha1.OperatorIn, Values: []string{v1alpha1.CapacityTypeSpot}}}
	b.create(nodeClass(), pool)
	r := b.startReplica("interruptions", replicaOptions{releaseOnCancel: true})
	b.waitElected(r, 30*time.Second)
	minAvailable := intstr.FromInt32(2)
	b.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: lambdaNS}}, deployment(lambdaNS, "web", 3, "500m"),
		&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: lambdaNS, Name: "web"},
			Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}})
	b.eventually(settle, b.running(lambdaNS, "web", 3))
	pods, err := b.pods(lambdaNS, "web")
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, p := range pods {
		count[p.Spec.NodeName]++
	}
	busiest := pods[0].Spec.NodeName
	for name, n := range count {
		if n > count[busiest] {
			busiest = name
		}
	}
	node := &corev1.Node{}
	if err := b.Admin.Get(context.Background(), client.ObjectKey{Name: busiest}, node); err != nil {
		t.Fatal(err)
	}
	if node.Labels[v1alpha1.LabelCapacityType] != v1alpha1.CapacityTypeSpot {
		t.Fatalf("node %s is %q capacity, want spot", node.Name, node.Labels[v1alpha1.LabelCapacityType])
	}
	t.Logf("spot node %s (%s) runs %d of the 3 pods", node.Name, node.Spec.ProviderID, count[busiest])
	return node
}

// instanceOf is the instance id of a Node.
func instanceOf(n *corev1.Node) string { return marker.InstanceID(n.Spec.ProviderID) }

// raiseEvents has EC2 and AWS Health raise their events for the spot node
// and the strangers, and waits until EventBridge's rules have put each on
// the queue; it returns their bodies.
func (b *bed) raiseEvents(t *testing.T, spot *corev1.Node, s strangers) []string {
	t.Helper()
	emu, ids := b.Emulator, s.ids()
	if _, err := emu.Terminate(ids[1]); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{emu.Interrupt(instanceOf(spot)), emu.Rebalance(ids[0]),
		emu.ScheduleChange(awsemu.ScheduledChange{EventTypeCode: "AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED", Start: time.Now().Add(time.Hour),
			InstanceIDs: []string{ids[2], ids[3]}}),
		emu.InterruptReserved(ids[4]), emu.Interrupt(s.ghost)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := []queued{{"EC2 Spot Instance Interruption Warning", instanceOf(spot)}, {"EC2 Instance Rebalance Recommendation", ids[0]},
		{"EC2 Instance State-change Notification", ids[1]}, {"AWS Health Event", ids[2]},
		{"EC2 Capacity Reservation Instance Interruption Warning", ids[4]}, {"EC2 Spot Instance Interruption Warning", s.ghost}}
	var bodies []string
	b.eventually(settle, func() error {
		bodies = bodies[:0]
		for _, w := range want {
			body, ok := w.in(b.Emulator.QueueMessages(testbed.InterruptionQueue))
			if !ok {
				return fmt.Errorf("no %s for %s on the queue", w.detailType, w.instance)
			}
			bodies = append(bodies, body)
		}
		return nil
	})
	return bodies
}

// queued is an event expected on the queue: its detail type and an instance it names.
type queued struct{ detailType, instance string }

func (q queued) in(bodies []string) (string, bool) {
	for _, body := range bodies {
		var ev struct {
			DetailType string `json:"detail-type"`
		}
		if json.Unmarshal([]byte(body), &ev) == nil && ev.DetailType == q.detailType && strings.Contains(body, `"`+q.instance+`"`) {
			return body, true
		}
	}
	return "", false
}

// queueDuplicateAndMalformed sends a duplicate of the spot warning and two
// malformed bodies straight to the queue; it returns the malformed
// messages' ids.
func (b *bed) queueDuplicateAndMalformed(t *testing.T, l *testbed.Lambda, events []string) []string {
	t.Helper()
	ctx, now := context.Background(), time.Now().UTC()
	send := func(body string) string {
		out, err := sqs.NewFromConfig(l.AWS).SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(l.QueueURL), MessageBody: aws.String(body)})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.MessageId)
	}
	send(events[0]) // SQS delivers at least once: the spot warning again
	return []string{send("{this is not an EventBridge event"),
		send(`{"version":"0","id":"e2e-bad","source":"aws.ec2","detail-type":"EC2 Spot Instance Interruption Warning","time":"` +
			now.Format(time.RFC3339) + `","detail":{"instance-action":"terminate"}}`)}
}

// expectOnlyMalformedFailed waits until the queued messages have been
// delivered once, and checks the function reported exactly the malformed
// ones failed, and that the events are no longer on the queue.
func (b *bed) expectOnlyMalformedFailed(t *testing.T, l *testbed.Lambda, queued int, events, malformed []string) {
	t.Helper()
	var failed []string
	b.eventually(settle, func() error {
		seen := map[string]bool{}
		failed = nil
		for _, inv := range b.Emulator.Invocations(l.MappingUUID) {
			if inv.Error != "" {
				return fmt.Errorf("invocation failed as a whole: %s\n%s", inv.Error, l.Runtime.Logs())
			}
			for _, id := range inv.MessageIDs {
				seen[id] = true
			}
			failed = append(failed, inv.Failed...)
		}
		if len(seen) < queued {
			return fmt.Errorf("%d of %d messages delivered", len(seen), queued)
		}
		return nil
	})
	slices.Sort(failed)
	failed = slices.Compact(failed)
	want := slices.Sorted(slices.Values(malformed))
	if !slices.Equal(failed, want) {
		t.Errorf("records reported failed %v, want the malformed %v", failed, want)
	}
	b.eventually(settle, func() error {
		left := b.Emulator.QueueMessages(testbed.InterruptionQueue)
		for _, body := range events {
			if slices.Contains(left, body) {
				return fmt.Errorf("an event handled is still on the queue: %s", body)
			}
		}
		if n := len(left); n < len(malformed) {
			return fmt.Errorf("%d messages left on the queue, want the %d malformed ones at least: %v", n, len(malformed), left)
		}
		return nil
	})
}

// expectLambdaLogs checks the function's output: JSON log lines each with a
// request and a message id, metric lines in embedded metric format, and no
// request forbidden.
func expectLambdaLogs(t *testing.T, logs string) {
	t.Helper()
	lines, metrics := 0, 0
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(strings.ToLower(line), "forbidden") {
			t.Errorf("the Lambda was forbidden a request: %s", line)
		}
		var doc map[string]any
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &doc) != nil {
			continue
		}
		if _, ok := doc["_aws"]; ok {
			metrics++
			continue
		}
		lines++
		if doc["request_id"] == "" || doc["request_id"] == nil || doc["message_id"] == nil {
			t.Errorf("log line without a request or message id: %s", line)
		}
	}
	if lines < 10 || metrics == 0 {
		t.Errorf("%d log lines and %d metric lines from the function, want a line per record and metrics:\n%s", lines, metrics, logs)
	}
}
