package provisioningrequest_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stowage-dev/stowage/controller/apis/autoscaling/crd"
	provreqv1 "github.com/stowage-dev/stowage/controller/apis/autoscaling/v1"
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/cloudprovider/fake"
	"github.com/stowage-dev/stowage/controller/provisioningrequest"
	"github.com/stowage-dev/stowage/controller/state/statetest"
)

func TestMain(m *testing.M) { os.Exit(statetest.Run(m)) }

// fixture is the shared API server serving Cluster Autoscaler's CRD (which
// validates every status written), a cluster state fed from it with an
// on-demand pool of m6i types, and the controller.
type fixture struct {
	env  *statetest.Env
	kube client.Client
	c    *provisioningrequest.Controller
}

func setup(t *testing.T) *fixture {
	env := statetest.Start(t)
	if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{
		CRDs: []*apiextensionsv1.CustomResourceDefinition{crd.MustProvisioningRequest()}}); err != nil {
		t.Fatal(err)
	}
	scheme := statetest.Scheme()
	if err := provreqv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	kube, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	m6i := slices.DeleteFunc(catalogue.Builtin(), func(i catalogue.Info) bool { return i.Family != "m6i" || i.Size != "4xlarge" })
	cloud := fake.New(catalogue.InstanceTypes(m6i, catalogue.DefaultOptions())...)
	onDemand := statetest.Requirement(v1alpha1.LabelCapacityType, v1alpha1.OperatorIn, v1alpha1.CapacityTypeOnDemand)
	env.Create(t, statetest.NodeClass("default"), statetest.NodePool("default", "default", onDemand))
	for name, cpu := range map[string]string{"worker": "1", "huge": "1000"} {
		tmpl := &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: env.Namespace, Name: name},
			Template: corev1.PodTemplateSpec{Spec: statetest.Pod(env.Namespace, "", cpu, "1Gi").Spec}}
		if err := kube.Create(t.Context(), tmpl); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = kube.DeleteAllOf(t.Context(), &provreqv1.ProvisioningRequest{}, client.InNamespace(env.Namespace))
	})
	return &fixture{env: env, kube: kube, c: provisioningrequest.New(env.Clock, kube, env.Cluster, cloud, provisioningrequest.Options{})}
}

// node creates a registered node of cpu and waits for the state to see it.
func (f *fixture) node(t *testing.T, name, cpu string) {
	node := statetest.Node(name, "aws:///us-east-1a/i-"+name, cpu, "64Gi")
	f.env.Create(t, node)
	// The API server's admission taints a new node not-ready; the node
	// lifecycle controller, absent here, lifts it once the node is Ready.
	node.Spec.Taints = nil
	if err := f.kube.Update(t.Context(), node); err != nil {
		t.Fatal(err)
	}
	statetest.Eventually(t, 10*time.Second, func() error {
		for _, n := range f.env.Cluster.Snapshot(nil, nil).Nodes {
			if n.Name() == name && len(n.Node.Spec.Taints) == 0 {
				return nil
			}
		}
		return fmt.Errorf("the state has no untainted node %s", name)
	})
}

// request creates a request of count pods of the 1-cpu template "worker"
// (or the one named by template).
func (f *fixture) request(t *testing.T, name, class string, count int32, template ...string) *provreqv1.ProvisioningRequest {
	tmpl := append(template, "worker")[0]
	pr := &provreqv1.ProvisioningRequest{ObjectMeta: metav1.ObjectMeta{Namespace: f.env.Namespace, Name: name},
		Spec: provreqv1.ProvisioningRequestSpec{ProvisioningClassName: class,
			PodSets: []provreqv1.PodSet{{PodTemplateRef: provreqv1.Reference{Name: tmpl}, Count: count}}}}
	if err := f.kube.Create(t.Context(), pr); err != nil {
		t.Fatal(err)
	}
	return pr
}

// reconcile runs the controller on pr and reads pr back.
func (f *fixture) reconcile(t *testing.T, pr *provreqv1.ProvisioningRequest) reconcile.Result {
	t.Helper()
	res, err := f.c.Reconcile(t.Context(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: pr.Namespace, Name: pr.Name}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.kube.Get(t.Context(), client.ObjectKeyFromObject(pr), pr); err != nil {
		t.Fatal(err)
	}
	return res
}

// expect checks a condition's status and reason.
func expect(t *testing.T, pr *provreqv1.ProvisioningRequest, typ string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	c := apimeta.FindStatusCondition(pr.Status.Conditions, typ)
	if c == nil || c.Status != status || c.Reason != reason {
		t.Fatalf("%s: condition %s is %+v, want %s/%s", pr.Name, typ, c, status, reason)
	}
}

// booked is how many pods the state books for pr, and the nodes they are
// pinned to (none while free to open claims).
func (f *fixture) booked(pr *provreqv1.ProvisioningRequest) (int, []string) {
	for _, b := range f.env.Cluster.Bookings() {
		if b.Owner == provisioningrequest.OwnerOf(pr) {
			var nodes []string
			if a := b.Pods[0].Spec.Affinity; a != nil {
				nodes = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Values
			}
			return len(b.Pods), nodes
		}
	}
	return 0, nil
}

// TestCheckCapacityBooksTheRoomThatExists: a 4-cpu node (less what the
// solver keeps for the system) takes a check-capacity request of 3 pods of
// 1 cpu; its room is booked there, so a second request of 2 does not fit
// beside it and launches nothing; after the booking time the first is
// BookingExpired and its room is free again.
func TestCheckCapacityBooksTheRoomThatExists(t *testing.T) {
	f := setup(t)
	f.node(t, "n1", "4")
	first := f.request(t, "first", provreqv1.CheckCapacityClass, 3)
	f.reconcile(t, first)
	expect(t, first, provreqv1.Provisioned, metav1.ConditionTrue, provisioningrequest.ReasonCapacityIsFound)
	if n, nodes := f.booked(first); n != 3 || !slices.Equal(nodes, []string{"n1"}) {
		t.Fatalf("booked %d pods pinned to %v, want 3 on n1", n, nodes)
	}
	if got := first.Status.ProvisioningClassDetails[provisioningrequest.DetailNodes]; got != "n1" {
		t.Errorf("detail nodes %q, want n1", got)
	}

	second := f.request(t, "second", provreqv1.CheckCapacityClass, 2)
	f.reconcile(t, second)
	expect(t, second, provreqv1.Provisioned, metav1.ConditionFalse, provisioningrequest.ReasonCapacityIsNotFound)
	if n, _ := f.booked(second); n != 0 {
		t.Fatalf("a request that does not fit booked %d pods", n)
	}

	f.env.Clock.Step(provisioningrequest.DefaultBookingTime)
	f.reconcile(t, first)
	expect(t, first, provreqv1.BookingExpired, metav1.ConditionTrue, provisioningrequest.ReasonBookingExpired)
	if n, _ := f.booked(first); n != 0 {
		t.Fatalf("an expired booking still books %d pods", n)
	}
}

// TestConsumersTakeTheBookingsPlace: each consuming pod bound to the node
// takes one booked pod's place; when the node is deleted while they run,
// the request is CapacityRevoked.
func TestConsumersTakeTheBookingsPlace(t *testing.T) {
	f := setup(t)
	f.node(t, "n1", "4")
	pr := f.request(t, "gang", provreqv1.CheckCapacityClass, 3)
	f.reconcile(t, pr)
	for i := range 2 {
		pod := statetest.Pod(f.env.Namespace, fmt.Sprintf("worker-%d", i), "1", "1Gi")
		pod.Annotations = map[string]string{provreqv1.DeprecatedConsumeAnnotation: "gang"}
		pod.Spec.NodeName = "n1"
		f.env.Create(t, pod)
	}
	f.reconcile(t, pr)
	if n, _ := f.booked(pr); n != 1 {
		t.Fatalf("booked %d pods beside 2 bound consumers, want 1", n)
	}
	expect(t, pr, provreqv1.Provisioned, metav1.ConditionTrue, provisioningrequest.ReasonCapacityIsFound)

	if err := f.kube.Delete(t.Context(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}); err != nil {
		t.Fatal(err)
	}
	statetest.Eventually(t, 10*time.Second, func() error {
		if nodes := f.env.Cluster.Snapshot(nil, nil).Nodes; len(nodes) != 0 {
			return fmt.Errorf("the state still has %d nodes", len(nodes))
		}
		return nil
	})
	f.reconcile(t, pr)
	expect(t, pr, provreqv1.CapacityRevoked, metav1.ConditionTrue, provisioningrequest.ReasonCapacityRevoked)
	if n, _ := f.booked(pr); n != 0 {
		t.Fatalf("a revoked request still books %d pods", n)
	}
}

// TestAtomicScaleUp: with no node, an atomic request's pods are booked free
// to open claims (the provisioner launches them) and it is not yet
// Provisioned; once a node that holds them all registers, it is, and the
// booking is pinned there. A request no instance type can hold is Failed
// at once and books nothing.
func TestAtomicScaleUp(t *testing.T) {
	f := setup(t)
	pr := f.request(t, "gang", provreqv1.AtomicScaleUpClass, 4)
	if res := f.reconcile(t, pr); res.RequeueAfter == 0 {
		t.Error("a request being launched is not looked at again")
	}
	expect(t, pr, provreqv1.Provisioned, metav1.ConditionFalse, provisioningrequest.ReasonProvisioning)
	if n, nodes := f.booked(pr); n != 4 || nodes != nil {
		t.Fatalf("booked %d pods pinned to %v, want 4 free to open claims", n, nodes)
	}
	f.node(t, "n1", "16")
	f.reconcile(t, pr)
	expect(t, pr, provreqv1.Provisioned, metav1.ConditionTrue, provisioningrequest.ReasonCapacityIsProvisioned)
	if n, nodes := f.booked(pr); n != 4 || !slices.Equal(nodes, []string{"n1"}) {
		t.Fatalf("booked %d pods pinned to %v, want 4 on n1", n, nodes)
	}

	big := f.request(t, "big", provreqv1.AtomicScaleUpClass, 1, "huge")
	f.reconcile(t, big)
	expect(t, big, provreqv1.Failed, metav1.ConditionTrue, provisioningrequest.ReasonCapacityShortage)
	if n, _ := f.booked(big); n != 0 {
		t.Fatalf("a failed request books %d pods", n)
	}
}

// TestMissingTemplateIsNotAccepted names the PodTemplate in the condition.
func TestMissingTemplateIsNotAccepted(t *testing.T) {
	f := setup(t)
	pr := f.request(t, "gang", provreqv1.AtomicScaleUpClass, 1, "absent")
	f.reconcile(t, pr)
	expect(t, pr, provreqv1.Accepted, metav1.ConditionFalse, provisioningrequest.ReasonPodTemplateNotFound)
	if msg := apimeta.FindStatusCondition(pr.Status.Conditions, provreqv1.Accepted).Message; !strings.Contains(msg, "podSets[0].podTemplateRef") ||
		!strings.Contains(msg, "absent") {
		t.Fatalf("message %q does not name the field and the template", msg)
	}
}
