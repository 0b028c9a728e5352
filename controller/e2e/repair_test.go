package e2e_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/nodeclaim/repair"
	"github.com/stowage-dev/stowage/internal/testbed"
)

// TestUnreachableNodesAreRepairedOnTheBed: two pools of three nodes, one pod
// on each node; the kubelets of one node of the first pool and two of the
// second go silent (their leases are taken from kwok, so that nothing
// renews them or writes their status), and kube-controller-manager's node
// lifecycle controller marks them Unknown after its grace period. Past the
// pools' repairAfter, the first pool's node is replaced and its pod runs on
// the new node; the second pool's, two of three unhealthy (more than 20%),
// are held back with a NodeRepairBlocked event and keep their claims.
func TestUnreachableNodesAreRepairedOnTheBed(t *testing.T) {
	const ns, repaired, held = "repair", "repaired", "held"
	b := startBed(t, testbed.Options{})
	b.create(nodeClass(), repairPool(repaired), repairPool(held), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	r := b.startReplica("repair", replicaOptions{releaseOnCancel: true})
	b.waitElected(r, 30*time.Second)
	b.create(onPool(deployment(ns, repaired, 3, "1500m"), repaired), onPool(deployment(ns, held, 3, "1500m"), held))
	b.eventually(settle, b.runningIn(ns, repaired, 3, repaired))
	b.eventually(settle, b.runningIn(ns, held, 3, held))
	sick := append(b.nodesOf(ns, repaired)[:1], b.nodesOf(ns, held)[:2]...)
	for _, n := range sick {
		b.silence(n)
	}

	// node-monitor-grace-period (50 s), then the pools' repairAfter.
	b.eventually(3*time.Minute, b.nodeEvents(repair.ReasonRepairBlocked, sick[1], sick[2]))
	b.eventually(3*time.Minute, func() error {
		if err := b.nodeEvents(repair.ReasonRepaired, sick[0])(); err != nil {
			return err
		}
		if err := b.runningIn(ns, repaired, 3, repaired)(); err != nil {
			return err
		}
		if on := b.nodesOf(ns, repaired); slices.Contains(on, sick[0]) {
			return fmt.Errorf("pods of %s run on %v, still on the repaired node %s", repaired, on, sick[0])
		}
		var node corev1.Node
		if err := b.Admin.Get(context.Background(), client.ObjectKey{Name: sick[0]}, &node); !apierrors.IsNotFound(err) {
			return fmt.Errorf("repaired node %s: %v, want it deleted", sick[0], err)
		}
		return nil
	})
	for _, n := range sick[1:] {
		if err := b.nodeEvents(repair.ReasonRepaired, n)(); err == nil {
			t.Errorf("node %s of pool %s was repaired with two of its three nodes unhealthy", n, held)
		}
	}
	if err := b.claimsOfPool(held, 3); err != nil {
		t.Error(err)
	}
}

// repairPool is an on-demand pool of c6i.large (one 1500m pod per node)
// whose nodes are repaired after 10 s unhealthy.
func repairPool(name string) *v1alpha1.NodePool {
	np := onDemandPool(name, 0, "c6i.large")
	np.Spec.Disruption.RepairAfter = ptr.To(v1alpha1.MustParseDuration("10s"))
	return np
}

// onPool selects the pool's nodes for the deployment's pods.
func onPool(d *appsv1.Deployment, pool string) *appsv1.Deployment {
	d.Spec.Template.Spec.NodeSelector = map[string]string{v1alpha1.LabelNodePool: pool}
	return d
}

// nodesOf lists the nodes the pods of app are bound to, sorted.
func (b *bed) nodesOf(ns, app string) []string {
	b.t.Helper()
	pods, err := b.pods(ns, app)
	if err != nil {
		b.t.Fatal(err)
	}
	var out []string
	for _, p := range pods {
		if p.Spec.NodeName != "" && !slices.Contains(out, p.Spec.NodeName) {
			out = append(out, p.Spec.NodeName)
		}
	}
	slices.Sort(out)
	return out
}

// silence makes the node's kubelet go quiet: its lease is taken over by
// another holder, which kwok respects as another kwok's (it neither renews
// the lease nor writes the node's status any more), and renewed once, so
// that the node lifecycle controller hears nothing after it.
func (b *bed) silence(node string) {
	b.t.Helper()
	var lease coordinationv1.Lease
	key := client.ObjectKey{Namespace: corev1.NamespaceNodeLease, Name: node}
	if err := b.Admin.Get(context.Background(), key, &lease); err != nil {
		b.t.Fatalf("reading the lease of node %s: %v", node, err)
	}
	lease.Spec.HolderIdentity = ptr.To("e2e-silenced")
	lease.Spec.LeaseDurationSeconds = ptr.To[int32](3600)
	lease.Spec.RenewTime = ptr.To(metav1.NewMicroTime(time.Now()))
	if err := b.Admin.Update(context.Background(), &lease); err != nil {
		b.t.Fatalf("taking the lease of node %s from kwok: %v", node, err)
	}
}

// nodeEvents checks that each node has an event of the reason.
func (b *bed) nodeEvents(reason string, nodes ...string) func() error {
	return func() error {
		var list eventsv1.EventList
		if err := b.Admin.List(context.Background(), &list); err != nil {
			return err
		}
		for _, n := range nodes {
			if !slices.ContainsFunc(list.Items, func(e eventsv1.Event) bool {
				return e.Regarding.Kind == "Node" && e.Regarding.Name == n && e.Reason == reason
			}) {
				return fmt.Errorf("no %s event on node %s yet", reason, n)
			}
		}
		return nil
	}
}

// claimsOfPool checks that the pool has want claims, none being deleted.
func (b *bed) claimsOfPool(pool string, want int) error {
	claims, err := b.claims()
	if err != nil {
		return err
	}
	var names []string
	for _, c := range claims {
		if c.Labels[v1alpha1.LabelNodePool] == pool {
			if c.DeletionTimestamp != nil {
				return fmt.Errorf("nodeclaim %s of pool %s is being deleted", c.Name, pool)
			}
			names = append(names, c.Name)
		}
	}
	if len(names) != want {
		return fmt.Errorf("pool %s has nodeclaims %s, want %d", pool, strings.Join(names, ", "), want)
	}
	return nil
}
