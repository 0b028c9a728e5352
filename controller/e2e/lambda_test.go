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
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/testbed"
	"github.com/stowage-dev/stowage/internal/testenv"
	"github.com/stowage-dev/stowage/lambda/marker"
)

const lambdaNS = "interrupted"

// TestInterruptionLambdaEndToEnd runs the interruption path on real parts:
// Stowage running, a spot node with pods behind a PDB, and ten mixed
// messages on the interruption queue (seven events put to EventBridge and
// routed by its rules, a redelivered duplicate, and two malformed bodies
// sent straight to the queue, as EventBridge refuses them), delivered by the
// event source mapping to the Lambda's bootstrap under RIE, which reaches
// the API server with EKS tokens of its role alone. Exactly the malformed
// records fail; the Nodes the events name are marked once each and no other
// Node; the interrupted spot node is replaced without losing a pod.
func TestInterruptionLambdaEndToEnd(t *testing.T) {
	testenv.RequireAssets(t, testenv.LambdaRIE)
	zip, err := testbed.BuildLambdaZip(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b := startBed(t, testbed.Options{})
	spot := b.spotNodeWithPods(t)
	others := b.strangerNodes(t, "rebalance", "stopping", "health-1", "health-2", "reserved")
	marks := watchMarks(t, b)
	l, err := b.StartLambda(context.Background(), testbed.LambdaOptions{Zip: zip, Rebalance: "mark", Disabled: true})
	if err != nil {
		t.Fatal(err)
	}
	malformed := b.queueTenMessages(t, l, spot, others)
	avail := watchAvailability(t, b, spot.Name)
	if err := l.EnableMapping(context.Background()); err != nil {
		t.Fatal(err)
	}

	b.expectOnlyMalformedFailed(t, l, malformed)
	want := map[string]string{spot.Name: v1alpha1.InterruptionKindSpotInterruption,
		others[0].Name: v1alpha1.InterruptionKindRebalanceRecommendation, others[1].Name: v1alpha1.InterruptionKindInstanceStopping,
		others[2].Name: v1alpha1.InterruptionKindScheduledChange, others[3].Name: v1alpha1.InterruptionKindScheduledChange,
		others[4].Name: v1alpha1.InterruptionKindCapacityReservationInterruption}
	b.eventually(settle, func() error { return marks.markedOnce(want) })
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

// strangerNodes creates Nodes of instances the emulator does not run, kept
// free of pods: the other events' targets, which Stowage does not manage.
func (b *bed) strangerNodes(t *testing.T, names ...string) []*corev1.Node {
	t.Helper()
	var out []*corev1.Node
	for i, name := range names {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "stranger-" + name},
			Spec: corev1.NodeSpec{ProviderID: fmt.Sprintf("aws:///us-east-1b/i-0e2e%013x", i+1),
				Taints: []corev1.Taint{{Key: "e2e.stowage.dev/stranger", Effect: corev1.TaintEffectNoSchedule}}}}
		b.create(n)
		out = append(out, n)
	}
	return out
}

// instanceOf is the instance id of a Node.
func instanceOf(n *corev1.Node) string { return marker.InstanceID(n.Spec.ProviderID) }

// queueTenMessages puts the seven events to EventBridge, then sends a
// duplicate of the spot warning's message and two malformed bodies
// straight to the queue; it returns the malformed messages' ids.
func (b *bed) queueTenMessages(t *testing.T, l *testbed.Lambda, spot *corev1.Node, others []*corev1.Node) []string {
	t.Helper()
	ctx, now := context.Background(), time.Now().UTC()
	entry := func(source, detailType string, detail any) ebtypes.PutEventsRequestEntry {
		raw, _ := json.Marshal(detail)
		return ebtypes.PutEventsRequestEntry{Source: aws.String(source), DetailType: aws.String(detailType), Detail: aws.String(string(raw)), Time: aws.Time(now)}
	}
	entries := []ebtypes.PutEventsRequestEntry{
		entry("aws.ec2", "EC2 Spot Instance Interruption Warning", map[string]string{"instance-id": instanceOf(spot), "instance-action": "terminate"}),
		entry("aws.ec2", "EC2 Instance Rebalance Recommendation", map[string]string{"instance-id": instanceOf(others[0])}),
		entry("aws.ec2", "EC2 Instance State-change Notification", map[string]string{"instance-id": instanceOf(others[1]), "state": "stopping"}),
		entry("aws.health", "AWS Health Event", map[string]any{"service": "EC2", "eventTypeCategory": "scheduledChange", "statusCode": "upcoming",
			"eventTypeCode": "AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED", "startTime": now.Add(time.Hour).Format(time.RFC1123),
			"affectedEntities": []map[string]string{{"entityValue": instanceOf(others[2])}, {"entityValue": instanceOf(others[3])}}}),
		entry("aws.ec2", "EC2 Capacity Reservation Instance Interruption Warning", map[string]string{"instance-id": instanceOf(others[4]),
			"instance-action": "terminate", "instance-termination-time": now.Add(2 * time.Minute).Format(time.RFC3339)}),
		entry("aws.ec2", "EC2 Spot Instance Interruption Warning", map[string]string{"instance-id": "i-0e2e00000000dead0", "instance-action": "terminate"}),
		entry("aws.ec2", "EC2 Instance State-change Notification", map[string]string{"instance-id": instanceOf(others[1]), "state": "running"}),
	}
	out, err := eventbridge.NewFromConfig(l.AWS).PutEvents(ctx, &eventbridge.PutEventsInput{Entries: entries})
	if err != nil || out.FailedEntryCount != 0 {
		t.Fatalf("PutEvents: %+v, %v", out, err)
	}
	queued := b.Emulator.QueueMessages(testbed.InterruptionQueue)
	if len(queued) != len(entries) {
		t.Fatalf("the rules routed %d events to the queue, want %d", len(queued), len(entries))
	}
	send := func(body string) string {
		out, err := sqs.NewFromConfig(l.AWS).SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(l.QueueURL), MessageBody: aws.String(body)})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.MessageId)
	}
	send(queued[0]) // SQS delivers at least once: the spot warning again
	malformed := []string{send("{this is not an EventBridge event"),
		send(`{"version":"0","id":"e2e-bad","source":"aws.ec2","detail-type":"EC2 Spot Instance Interruption Warning","time":"` +
			now.Format(time.RFC3339) + `","detail":{"instance-action":"terminate"}}`)}
	if n := len(b.Emulator.QueueMessages(testbed.InterruptionQueue)); n != 10 {
		t.Fatalf("%d messages on the queue, want 10", n)
	}
	return malformed
}

// expectOnlyMalformedFailed waits until every message has been delivered
// once, and checks the function reported exactly the malformed ones failed,
// and that they alone are left on the queue.
func (b *bed) expectOnlyMalformedFailed(t *testing.T, l *testbed.Lambda, malformed []string) {
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
		if len(seen) < 10 {
			return fmt.Errorf("%d of 10 messages delivered", len(seen))
		}
		return nil
	})
	slices.Sort(failed)
	failed = slices.Compact(failed)
	want := slices.Sorted(slices.Values(malformed))
	if !slices.Equal(failed, want) {
		t.Errorf("records reported failed %v, want the malformed %v", failed, want)
	}
	if left := b.Emulator.QueueMessages(testbed.InterruptionQueue); len(left) != 2 {
		t.Errorf("%d messages left on the queue, want the 2 malformed ones: %v", len(left), left)
	}
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
