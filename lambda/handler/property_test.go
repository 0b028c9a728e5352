package handler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/lambda/handler"
)

// instancePool are the instances the property test's Nodes and events draw from.
var instancePool = func() []string {
	var ids []string
	for i := range 10 {
		ids = append(ids, fmt.Sprintf("i-0%016x", 0xabc0+i))
	}
	return append(ids, "i-abcd1111", "i-abcd2222")
}()

// TestNoEventTouchesANodeItDoesNotName is a property test: over many seeded
// rounds of random Nodes (names reused by other instances between batches,
// provider ids of other clouds, Nodes without one) and random events of
// every kind (resources naming other instances, bodies with bytes flipped),
// the handler only ever writes a Node whose provider id names an instance
// the event's detail names.
func TestNoEventTouchesANodeItDoesNotName(t *testing.T) {
	for seed := range uint64(150) {
		rng := rand.New(rand.NewPCG(seed, 7))
		e := newEnv(t, handler.Config{Rebalance: handler.RebalanceMark}, randomNodes(rng)...)
		for round := range 3 {
			if round > 0 {
				e.reshuffle(rng)
			}
			var bodies [][]byte
			var allowed []map[string]bool
			for range 1 + rng.IntN(10) {
				b, ok := randomEvent(rng)
				bodies, allowed = append(bodies, b), append(allowed, ok)
			}
			e.checkTouches(t, seed, bodies, allowed)
		}
	}
}

// checkTouches delivers the events one batch at a time per event, and
// fails when a Node that changed does not belong to an allowed instance.
func (e *env) checkTouches(t *testing.T, seed uint64, bodies [][]byte, allowed []map[string]bool) {
	t.Helper()
	ctx := context.Background()
	for i, body := range bodies {
		before := e.versions()
		e.h.HandleSQS(ctx, batch(body))
		for _, n := range e.list() {
			if before[n.Name] == n.ResourceVersion {
				continue
			}
			id := n.Spec.ProviderID[strings.LastIndex(n.Spec.ProviderID, "/")+1:]
			if !strings.HasPrefix(n.Spec.ProviderID, "aws:///") || !allowed[i][id] {
				t.Fatalf("seed %d: node %s (provider id %q) changed by an event naming %v:\n%s",
					seed, n.Name, n.Spec.ProviderID, allowed[i], body)
			}
		}
	}
}

func (e *env) list() []corev1.Node {
	list := &corev1.NodeList{}
	if err := e.kube.List(context.Background(), list); err != nil {
		e.t.Fatal(err)
	}
	return list.Items
}

func (e *env) versions() map[string]string {
	out := map[string]string{}
	for _, n := range e.list() {
		out[n.Name] = n.ResourceVersion
	}
	return out
}

// reshuffle deletes some Nodes and creates others, reusing names for other
// instances, behind the handler's index.
func (e *env) reshuffle(rng *rand.Rand) {
	ctx := context.Background()
	for _, n := range e.list() {
		if rng.IntN(2) == 0 {
			if err := e.kube.Delete(ctx, &n); err != nil {
				e.t.Fatal(err)
			}
		}
	}
	taken := map[string]bool{}
	for _, n := range e.list() {
		taken[n.Name] = true
	}
	for _, n := range randomNodes(rng) {
		if !taken[n.Name] {
			taken[n.Name] = true
			if err := e.kube.Create(ctx, n); err != nil {
				e.t.Fatal(err)
			}
		}
	}
}

// randomNodes are up to six Nodes with names from a small set, most of
// them AWS Nodes of instances from the pool.
func randomNodes(rng *rand.Rand) []*corev1.Node {
	var out []*corev1.Node
	taken := map[string]bool{}
	for range 1 + rng.IntN(6) {
		name := fmt.Sprintf("node-%d", rng.IntN(6))
		if taken[name] {
			continue
		}
		taken[name] = true
		id := instancePool[rng.IntN(len(instancePool))]
		providerID := []string{"aws:///us-east-1a/" + id, "aws:///us-east-1b/" + id, "kind://docker/" + id, "", "aws:///us-east-1a/" + id + "x"}[rng.IntN(5)]
		out = append(out, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: providerID}})
	}
	return out
}

// randomEvent is an event of a random kind, and the instances its detail
// names. Its resources name other instances; a third of the events get
// bytes flipped, and then any instance the body mentions is allowed.
func randomEvent(rng *rand.Rand) ([]byte, map[string]bool) {
	pick := func() string { return instancePool[rng.IntN(len(instancePool))] }
	target, decoy := pick(), pick()
	named := map[string]bool{target: true}
	var detailType, source string
	var detail any
	switch rng.IntN(5) {
	case 0:
		source, detailType = "aws.ec2", "EC2 Spot Instance Interruption Warning"
		detail = map[string]string{"instance-id": target, "instance-action": []string{"terminate", "stop", "hibernate"}[rng.IntN(3)]}
	case 1:
		source, detailType = "aws.ec2", "EC2 Instance Rebalance Recommendation"
		detail = map[string]string{"instance-id": target}
	case 2:
		source, detailType = "aws.ec2", "EC2 Instance State-change Notification"
		detail = map[string]string{"instance-id": target, "state": []string{"running", "stopping", "terminated"}[rng.IntN(3)]}
	case 3:
		source, detailType = "aws.ec2", "EC2 Capacity Reservation Instance Interruption Warning"
		detail = map[string]string{"instance-id": target, "instance-action": "terminate"}
	default:
		second := pick()
		named[second] = true
		source, detailType = "aws.health", "AWS Health Event"
		detail = map[string]any{"service": "EC2", "eventTypeCategory": "scheduledChange", "startTime": "Sun, 1 Nov 2026 02:00:00 GMT",
			"affectedEntities": []map[string]string{{"entityValue": target}, {"entityValue": "arn:aws:ec2:us-east-1:1:instance/" + second}}}
	}
	body, _ := json.Marshal(map[string]any{"version": "0", "id": fmt.Sprintf("ev-%d", rng.Uint32()), "source": source,
		"detail-type": detailType, "time": "2026-11-01T02:00:00Z", "resources": []string{"arn:aws:ec2:us-east-1a:instance/" + decoy},
		"detail": detail})
	if rng.IntN(3) > 0 {
		return body, named
	}
	for range 1 + rng.IntN(4) {
		body[rng.IntN(len(body))] = "\"{}[],:i-0abcdef"[rng.IntN(16)]
	}
	mentioned := map[string]bool{}
	for _, id := range instancePool {
		if strings.Contains(string(body), id) {
			mentioned[id] = true
		}
	}
	return body, mentioned
}
