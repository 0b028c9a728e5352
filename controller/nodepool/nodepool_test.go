package nodepool_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/nodepool"
)

func TestAPoolCountsTheCapacityAndNodesOfItsClaims(t *testing.T) {
	w := start(t)
	w.nodeClass(metav1.ConditionTrue, "")
	pool := w.pool(resources("cpu", "100", "nodes", "10"))
	w.claim("a", pool, resources("cpu", "4", "memory", "16Gi", "pods", "110"))
	w.claim("b", pool, resources("cpu", "8", "memory", "32Gi", "pods", "110", "nvidia.com/gpu", "1"))
	w.claim("pending", pool, nil)
	other := w.NodeClaim("other", nil)
	other.Labels = map[string]string{"stowage.dev/nodepool": pool.Name + "-other"}
	w.Create(other)
	w.UpdateStatus(other, func() { other.Status.Capacity = resources("cpu", "64") })

	w.expectResources(pool, resources("cpu", "12", "memory", "48Gi", "pods", "220", "nvidia.com/gpu", "1", "nodes", "3"))
	w.expectReady(pool, metav1.ConditionTrue, nodepool.ReasonNodeClassReady)
	cells := w.Printed("nodepools", pool.Name)
	if cells["Nodes"] != "3" || cells["Ready"] != "True" || cells["NodeClass"] != w.className() {
		t.Errorf("kubectl prints %v, want NodeClass %s, Nodes 3 and Ready True", cells, w.className())
	}
	w.expectGauge(nodepool.Usage, pool.Name, "cpu", 12)
	w.expectGauge(nodepool.Usage, pool.Name, "memory", 48<<30)
	w.expectGauge(nodepool.Usage, pool.Name, "nvidia.com/gpu", 1)
	w.expectGauge(nodepool.Usage, pool.Name, "nodes", 3)
	w.expectGauge(nodepool.Limit, pool.Name, "cpu", 100)
	w.expectGauge(nodepool.Limit, pool.Name, "nodes", 10)
	if n := series(nodepool.Limit, pool.Name); n != 2 {
		t.Errorf("the pool has %d limit series, want one per limit (2)", n)
	}
}

func TestDeletingAClaimTakesItOutOfThePoolsCounts(t *testing.T) {
	w := start(t)
	w.nodeClass(metav1.ConditionTrue, "")
	pool := w.pool(nil)
	a := w.claim("a", pool, resources("cpu", "4", "memory", "16Gi"))
	w.claim("b", pool, resources("cpu", "8", "memory", "32Gi"))
	w.expectResources(pool, resources("cpu", "12", "memory", "48Gi", "nodes", "2"))

	w.Delete(a)
	w.expectResources(pool, resources("cpu", "8", "memory", "32Gi", "nodes", "1"))
	w.expectGauge(nodepool.Usage, pool.Name, "nodes", 1)
	w.release(a)
	w.Eventually(settle, func() error { return w.Gone(a) })
	w.expectResources(pool, resources("cpu", "8", "memory", "32Gi", "nodes", "1"))
	if got := w.Printed("nodepools", pool.Name)["Nodes"]; got != "1" {
		t.Errorf("kubectl prints Nodes %q, want 1", got)
	}
}

func TestAPoolIsReadyOnlyWhileItsNodeClassIs(t *testing.T) {
	w := start(t)
	pool := w.pool(nil)
	cond := w.expectReady(pool, metav1.ConditionFalse, nodepool.ReasonNodeClassNotFound)
	if !strings.Contains(cond.Message, w.className()) {
		t.Errorf("Ready's message %q does not name the NodeClass %s", cond.Message, w.className())
	}
	w.expectResources(pool, resources("nodes", "0"))
	if got := w.Printed("nodepools", pool.Name)["Ready"]; got != "False" {
		t.Errorf("kubectl prints Ready %q, want False", got)
	}

	nc := w.nodeClass("", "")
	w.expectReady(pool, metav1.ConditionFalse, nodepool.ReasonNodeClassNotReady)

	w.setClassReady(nc, metav1.ConditionTrue, "")
	w.expectReady(pool, metav1.ConditionTrue, nodepool.ReasonNodeClassReady)
	w.event(pool.Name, nodepool.EventReady, 1)

	w.setClassReady(nc, metav1.ConditionFalse, "not authorized to perform ec2:DescribeSubnets")
	cond = w.expectReady(pool, metav1.ConditionFalse, nodepool.ReasonNodeClassNotReady)
	if !strings.Contains(cond.Message, w.className()) || !strings.Contains(cond.Message, "ec2:DescribeSubnets") {
		t.Errorf("Ready's message %q does not name the NodeClass and its reason", cond.Message)
	}
	if e := w.event(pool.Name, nodepool.EventNotReady, 2)[1]; e.Type != corev1.EventTypeWarning {
		t.Errorf("the not-ready event is %s, want Warning", e.Type)
	}

	w.Delete(nc)
	w.expectReady(pool, metav1.ConditionFalse, nodepool.ReasonNodeClassNotFound)
}
