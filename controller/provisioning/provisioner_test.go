package provisioning_test

import (
	"fmt"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	provreqv1 "github.com/stowage-dev/stowage/controller/apis/autoscaling/v1"
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/cloudprovider/fake"
	"github.com/stowage-dev/stowage/controller/provisioning"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/provisioningrequest"
	"github.com/stowage-dev/stowage/controller/scheduling"
	"github.com/stowage-dev/stowage/controller/state"
	"github.com/stowage-dev/stowage/controller/state/statetest"
)

func TestMain(m *testing.M) { os.Exit(statetest.Run(m)) }

// recorder keeps published events in memory.
type recorder struct {
	mu     sync.Mutex
	events []provisioning.Event
}

func (r *recorder) Publish(evs ...provisioning.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, evs...)
}

// about returns "reason: message" for each event about obj.
func (r *recorder) about(obj client.Object) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		if e.Object.GetName() == obj.GetName() && e.Object.GetNamespace() == obj.GetNamespace() {
			out = append(out, e.Reason+": "+e.Message)
		}
	}
	return out
}

// sequence names claims default-00001, default-00002, ...
func sequence() func() string {
	var n atomic.Int64
	return func() string { return fmt.Sprintf("%05d", n.Add(1)) }
}

// instanceTypes are the m6i and c6i types from large to 4xlarge.
func instanceTypes() []*cloudprovider.InstanceType {
	infos := slices.DeleteFunc(catalogue.Builtin(), func(i catalogue.Info) bool {
		return (i.Family != "m6i" && i.Family != "c6i") || !slices.Contains([]string{"large", "xlarge", "2xlarge", "4xlarge"}, i.Size)
	})
	return catalogue.InstanceTypes(infos, catalogue.DefaultOptions())
}

type fixture struct {
	env      *statetest.Env
	cloud    *fake.CloudProvider
	recorder *recorder
	ids      func() string
}

// setup starts the state on the API server with a NodeClass and an
// on-demand NodePool named default.
func setup(t *testing.T) *fixture {
	f := &fixture{env: statetest.Start(t), cloud: fake.New(instanceTypes()...), recorder: &recorder{}, ids: sequence()}
	onDemand := statetest.Requirement(v1alpha1.LabelCapacityType, v1alpha1.OperatorIn, v1alpha1.CapacityTypeOnDemand)
	f.env.Create(t, statetest.NodeClass("default"), statetest.NodePool("default", "default", onDemand))
	return f
}

func (f *fixture) provisioner(c *state.Cluster, rec provisioning.Recorder) *provisioning.Provisioner {
	return provisioning.NewProvisioner(c, f.cloud, provisioning.ClientWriter{Client: f.env.Client}, rec, f.ids)
}

// pending creates an unschedulable pod and waits until c sees it as such.
func (f *fixture) pending(t *testing.T, c *state.Cluster, name, cpu string) *corev1.Pod {
	pod := statetest.Unschedulable(statetest.Pod(f.env.Namespace, name, cpu, "1Gi"))
	f.env.Create(t, pod)
	statetest.Eventually(t, 10*time.Second, func() error {
		for _, p := range c.PendingPods() {
			if p.Name == name && len(p.Status.Conditions) > 0 && len(c.NodePools()) == 1 {
				return nil
			}
		}
		return fmt.Errorf("the state does not show pod %s as unschedulable, or has no pool", name)
	})
	return pod
}

func (f *fixture) claims(t *testing.T) []v1alpha1.NodeClaim {
	t.Helper()
	list := &v1alpha1.NodeClaimList{}
	if err := f.env.Client.List(t.Context(), list); err != nil {
		t.Fatalf("listing nodeclaims: %v", err)
	}
	return list.Items
}

func synced(t *testing.T, c *state.Cluster) {
	t.Helper()
	statetest.Eventually(t, 10*time.Second, func() error {
		if !c.Synced(t.Context()) {
			return fmt.Errorf("the state is not synced")
		}
		return nil
	})
}

func TestPendingPodGetsOneNodeClaim(t *testing.T) {
	f := setup(t)
	pod := f.pending(t, f.env.Cluster, "web", "1")
	solves := sampleCount(t)

	batch, err := f.provisioner(f.env.Cluster, f.recorder).Provision(t.Context())
	if err != nil {
		t.Fatalf("Provision: %v", err)
	}
	if got := testutil.ToFloat64(provisioning.StateSynced); got != 1 {
		t.Errorf("stowage_cluster_state_synced = %v, want 1", got)
	}
	if got := sampleCount(t); got != solves+1 {
		t.Errorf("stowage_provisioner_scheduling_duration_seconds has %d samples, want %d", got, solves+1)
	}
	if testutil.CollectAndCount(provisioning.OfferingPrice) == 0 {
		t.Error("no stowage_cloudprovider_instance_type_offering_price_estimate published")
	}
	claims := f.claims(t)
	if len(claims) != 1 || len(batch.NodeClaims) != 1 {
		t.Fatalf("%d nodeclaims in the API, %d in the batch, want 1", len(claims), len(batch.NodeClaims))
	}
	nc := claims[0]
	if nc.Name != "default-00001" || nc.Labels[v1alpha1.LabelNodePool] != "default" || nc.Spec.NodeClassRef.Name != "default" {
		t.Fatalf("nodeclaim %s, labels %v, class %+v", nc.Name, nc.Labels, nc.Spec.NodeClassRef)
	}
	expectRequirements(t, &nc, batch.Decision.NewNodeClaims[0].InstanceTypes)
	if cpu := nc.Spec.Resources.Requests[corev1.ResourceCPU]; cpu.Cmp(resource.MustParse("1")) < 0 {
		t.Fatalf("requests %v, want at least the pod's cpu", nc.Spec.Resources.Requests)
	}
	if !f.env.Cluster.IsNominated(pod) {
		t.Fatal("the pod is not nominated")
	}
	want := "Nominated: Pod should schedule on nodeclaim default-00001"
	if got := f.recorder.about(pod); !slices.Equal(got, []string{want}) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

// expectRequirements checks the claim allows exactly the decision's instance
// types, all from the catalogue the cloud offered, on demand only.
func expectRequirements(t *testing.T, nc *v1alpha1.NodeClaim, decided []*cloudprovider.InstanceType) {
	t.Helper()
	reqs := scheduling.FromAPI(nc.Spec.Requirements)
	types := reqs.Get(corev1.LabelInstanceTypeStable).Values()
	var offered, want []string
	for _, it := range instanceTypes() {
		offered = append(offered, it.Name)
	}
	for _, it := range decided {
		want = append(want, it.Name)
	}
	slices.Sort(want)
	if len(types) == 0 || !slices.Equal(types, want) {
		t.Fatalf("instance types %v, want the decision's %v", types, want)
	}
	for _, name := range types {
		if !slices.Contains(offered, name) {
			t.Fatalf("instance type %s was not offered", name)
		}
	}
	if ct := reqs.Get(v1alpha1.LabelCapacityType).Values(); !slices.Equal(ct, []string{v1alpha1.CapacityTypeOnDemand}) {
		t.Fatalf("capacity types %v, want on-demand", ct)
	}
}

func TestRepeatedBatchesDoNotLaunchTwice(t *testing.T) {
	f := setup(t)
	f.pending(t, f.env.Cluster, "web", "1")
	p := f.provisioner(f.env.Cluster, f.recorder)
	if _, err := p.Provision(t.Context()); err != nil {
		t.Fatalf("first Provision: %v", err)
	}
	synced(t, f.env.Cluster)
	batch, err := p.Provision(t.Context())
	if err != nil {
		t.Fatalf("second Provision: %v", err)
	}
	if len(batch.Pods) != 0 || len(f.claims(t)) != 1 {
		t.Fatalf("second batch solved %d pods; %d nodeclaims exist, want 1", len(batch.Pods), len(f.claims(t)))
	}
}

// TestRestartedStateCountsTheInflightClaim checks that a fresh state, which
// has lost the nominations, places the pod on the claim already launching.
func TestRestartedStateCountsTheInflightClaim(t *testing.T) {
	f := setup(t)
	f.pending(t, f.env.Cluster, "web", "1")
	if _, err := f.provisioner(f.env.Cluster, f.recorder).Provision(t.Context()); err != nil {
		t.Fatalf("Provision: %v", err)
	}
	restarted := f.env.NewCluster(t)
	synced(t, restarted)
	batch, err := f.provisioner(restarted, f.recorder).Provision(t.Context())
	if err != nil {
		t.Fatalf("Provision after the restart: %v", err)
	}
	if len(batch.NodeClaims) != 0 || len(f.claims(t)) != 1 {
		t.Fatalf("launched %d more nodeclaims; %d exist, want 1", len(batch.NodeClaims), len(f.claims(t)))
	}
	if got := batch.Decision.Existing; len(got) != 1 || got[0].Node != "default-00001" {
		t.Fatalf("placements %v, want web on default-00001", got)
	}
}

func TestProvisionWaitsForTheStateToSync(t *testing.T) {
	f := setup(t)
	c := state.NewCluster(f.env.Clock)
	c.AddSyncCheck(func() bool { return false })
	if _, err := f.provisioner(c, f.recorder).Provision(t.Context()); err != provisioning.ErrNotSynced {
		t.Fatalf("Provision on an unsynced state: %v, want ErrNotSynced", err)
	}
}

// TestUnschedulablePodGetsAnEvent publishes through the events.k8s.io API
// and reads the event back from the API server.
func TestUnschedulablePodGetsAnEvent(t *testing.T) {
	f := setup(t)
	pod := f.pending(t, f.env.Cluster, "huge", "1000")
	batch, err := f.provisioner(f.env.Cluster, f.kubeRecorder(t)).Provision(t.Context())
	if err != nil {
		t.Fatalf("Provision: %v", err)
	}
	if len(f.claims(t)) != 0 || len(batch.Decision.Unschedulable) != 1 {
		t.Fatalf("%d nodeclaims, %d unschedulable pods; want 0 and 1", len(f.claims(t)), len(batch.Decision.Unschedulable))
	}
	reason := batch.Decision.Unschedulable[0].Reason
	if !strings.Contains(reason, "nodepool default") {
		t.Fatalf("reason %q does not name the pool", reason)
	}
	statetest.Eventually(t, 10*time.Second, func() error {
		list := &eventsv1.EventList{}
		if err := f.env.Client.List(t.Context(), list, client.InNamespace(f.env.Namespace)); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Regarding.Name == pod.Name && e.Reason == provisioning.ReasonFailedScheduling &&
				e.Type == corev1.EventTypeWarning && strings.Contains(e.Note, reason) {
				return nil
			}
		}
		return fmt.Errorf("no FailedScheduling event on %s among %d events", pod.Name, len(list.Items))
	})
}

func (f *fixture) kubeRecorder(t *testing.T) provisioning.Recorder {
	cs, err := kubernetes.NewForConfig(f.env.Config)
	if err != nil {
		t.Fatalf("building the clientset: %v", err)
	}
	b := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	if err := b.StartRecordingToSinkWithContext(t.Context()); err != nil {
		t.Fatalf("starting the event broadcaster: %v", err)
	}
	t.Cleanup(b.Shutdown)
	return provisioning.KubeRecorder{Recorder: b.NewRecorder(f.env.Scheme, "stowage")}
}

// sampleCount is how many solves the scheduling duration histogram has seen.
func sampleCount(t *testing.T) uint64 {
	t.Helper()
	var m dto.Metric
	if err := provisioning.SchedulingDuration.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount()
}

// TestRequestConsumersAreNotProvisionedFor: pods that consume a
// ProvisioningRequest whose room is booked (under either annotation) use
// that room and no other, so a batch launches nothing for them; a consumer
// of a request that books nothing, and a plain pod, get their claims.
func TestRequestConsumersAreNotProvisionedFor(t *testing.T) {
	f := setup(t)
	owner := scheduler.BookingOwner{Kind: provisioningrequest.Kind, Namespace: f.env.Namespace, Name: "gang"}
	f.env.Cluster.SetBooking(scheduler.Booking{Owner: owner, Pods: scheduler.VirtualPods(owner, corev1.PodTemplateSpec{}, 1)})
	for i, c := range []struct{ key, request string }{
		{provreqv1.ConsumeAnnotation, "gang"}, {provreqv1.DeprecatedConsumeAnnotation, "gang"}, {provreqv1.ConsumeAnnotation, "done"},
	} {
		pod := statetest.Unschedulable(statetest.Pod(f.env.Namespace, fmt.Sprintf("%s-%d", c.request, i), "1", "1Gi"))
		pod.Annotations = map[string]string{c.key: c.request}
		f.env.Create(t, pod)
	}
	f.pending(t, f.env.Cluster, "web", "1")
	statetest.Eventually(t, 10*time.Second, func() error {
		if n := len(f.env.Cluster.PendingPods()); n != 4 {
			return fmt.Errorf("the state shows %d pending pods, want 4", n)
		}
		return nil
	})
	batch, err := f.provisioner(f.env.Cluster, f.recorder).Provision(t.Context())
	if err != nil {
		t.Fatalf("Provision: %v", err)
	}
	var solved []string
	for _, pod := range batch.Pods {
		solved = append(solved, pod.Name)
	}
	slices.Sort(solved)
	if !slices.Equal(solved, []string{"done-2", "web"}) {
		t.Fatalf("the batch solved %v, want done-2 and web: not the consumers of gang, whose room is booked", solved)
	}
}
