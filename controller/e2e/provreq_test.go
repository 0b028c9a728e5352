package e2e_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/stowage-dev/stowage/controller/apis/autoscaling/crd"
	provreqv1 "github.com/stowage-dev/stowage/controller/apis/autoscaling/v1"
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/provisioningrequest"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testbed"
)

// The names Kueue's ProvisioningRequest admission check gives a workload's
// objects: the request is <workload>-<check>-<attempt>, each pod set's
// PodTemplate ppt-<request>-<pod set>.
const (
	gangRequest  = "job-train-5b0d2-gang-1"
	gangTemplate = "ppt-" + gangRequest + "-main"
)

// startGangBed is a bed serving ProvisioningRequests (Cluster Autoscaler's
// CRD installed before Stowage starts, as stowage_controller does), a pool
// of p5.48xlarge only, with EC2 capacity for n of them in the first zone and
// none elsewhere, and one elected replica.
func startGangBed(t *testing.T, n int) *bed {
	b := startBed(t, testbed.Options{InstanceTypes: awsemu.BuiltinCatalogue()})
	if _, err := envtest.InstallCRDs(b.ControlPlane.Config, envtest.CRDInstallOptions{
		CRDs: []*apiextensionsv1.CustomResourceDefinition{crd.MustProvisioningRequest()}}); err != nil {
		t.Fatal(err)
	}
	for i, z := range b.Emulator.Zones() {
		b.Emulator.SetCapacity(awsemu.PoolKey{InstanceType: "p5.48xlarge", Zone: z.Name, CapacityType: awsemu.CapacityOnDemand}, map[bool]int{true: n}[i == 0])
	}
	b.create(nodeClass(), onDemandPool("p5", 0, "p5.48xlarge"), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "training"}})
	r := b.startReplica("gang", replicaOptions{releaseOnCancel: true})
	b.waitElected(r, 30*time.Second)
	return b
}

// requestGang creates what Kueue's admission check creates for the
// training Job's one pod set of 4: its PodTemplate, then the request.
func (b *bed) requestGang() *provreqv1.ProvisioningRequest {
	job := trainingJob("training")
	b.create(&corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "training", Name: gangTemplate}, Template: job.Spec.Template})
	pr := &provreqv1.ProvisioningRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "training", Name: gangRequest},
		Spec: provreqv1.ProvisioningRequestSpec{ProvisioningClassName: provreqv1.AtomicScaleUpClass,
			PodSets: []provreqv1.PodSet{{PodTemplateRef: provreqv1.Reference{Name: gangTemplate}, Count: 4}}}}
	b.create(pr)
	return pr
}

// condition checks that the request has the condition True.
func (b *bed) condition(pr *provreqv1.ProvisioningRequest, typ string) func() error {
	return func() error {
		if err := b.Admin.Get(context.Background(), client.ObjectKeyFromObject(pr), pr); err != nil {
			return err
		}
		if !apimeta.IsStatusConditionTrue(pr.Status.Conditions, typ) {
			return fmt.Errorf("request %s is not %s: %+v", pr.Name, typ, pr.Status.Conditions)
		}
		return nil
	}
}

// liveInstances checks that want instances are pending or running.
func (b *bed) liveInstances(want int) func() error {
	return func() error {
		n := 0
		for _, in := range b.Emulator.Instances() {
			if live(in) {
				n++
			}
		}
		if n != want {
			return fmt.Errorf("%d live instances, want %d", n, want)
		}
		return nil
	}
}

// TestAtomicRequestShortOfCapacityOnTheBed: an atomic request of 4
// p5.48xlarge-sized pods where EC2 has room for 3. The fourth launch finds
// no capacity; the request is Failed with the shortage as its reason, and
// the three instances launched for it are terminated: all or none.
func TestAtomicRequestShortOfCapacityOnTheBed(t *testing.T) {
	b := startGangBed(t, 3)
	failures := provisioningrequest.Outcomes.WithLabelValues(provreqv1.AtomicScaleUpClass, provreqv1.Failed, provisioningrequest.ReasonCapacityShortage)
	before := testutil.ToFloat64(failures)
	pr := b.requestGang()
	b.eventually(bootSettle, b.condition(pr, provreqv1.Failed))
	if got := testutil.ToFloat64(failures) - before; got != 1 {
		t.Errorf("stowage_provisioning_request_outcomes_total{condition=Failed,reason=CapacityShortage} moved by %v, want 1", got)
	}
	failed := apimeta.FindStatusCondition(pr.Status.Conditions, provreqv1.Failed)
	if failed.Reason != provisioningrequest.ReasonCapacityShortage {
		t.Errorf("Failed for %s (%s), want %s", failed.Reason, failed.Message, provisioningrequest.ReasonCapacityShortage)
	}
	if apimeta.IsStatusConditionTrue(pr.Status.Conditions, provreqv1.Provisioned) {
		t.Errorf("the request is Provisioned as well as Failed: %+v", pr.Status.Conditions)
	}
	b.eventually(settle, b.liveInstances(0))
	launched := len(b.Emulator.Instances())
	if launched > 3 {
		t.Errorf("%d instances launched, with EC2 capacity for 3", launched)
	}
	t.Logf("Failed: %s; %d instances launched and terminated", failed.Message, launched)
}

// TestAtomicRequestProvisionedThenConsumedOnTheBed: with room for all 4,
// the request is Provisioned once the 4 nodes have registered; the Job's
// pods, created only then and carrying the consume annotation as Kueue
// writes it, run on those 4 nodes and nothing more is launched for them.
func TestAtomicRequestProvisionedThenConsumedOnTheBed(t *testing.T) {
	b := startGangBed(t, 4)
	pr := b.requestGang()
	b.eventually(bootSettle, b.condition(pr, provreqv1.Provisioned))
	nodes := &corev1.NodeList{}
	if err := b.Admin.List(context.Background(), nodes); err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 4 {
		t.Fatalf("%d nodes when the request is Provisioned, want 4", len(nodes.Items))
	}
	job := consumingJob(trainingJob("training"))
	b.create(job)
	b.eventually(settle, b.jobSucceeded(job, 4))
	b.ranOnlyOn(t, "p5.48xlarge", 4)
	if apimeta.IsStatusConditionTrue(pr.Status.Conditions, provreqv1.Failed) {
		t.Errorf("the request is Failed: %+v", pr.Status.Conditions)
	}
}

// consumingJob is job unsuspended by Kueue: its pods name the request they
// consume (the annotation Kueue still writes, and the current one).
func consumingJob(job *batchv1.Job) *batchv1.Job {
	job.Spec.Template.Annotations = map[string]string{provreqv1.DeprecatedConsumeAnnotation: gangRequest,
		provreqv1.ConsumeAnnotation: gangRequest, provreqv1.ClassAnnotation: provreqv1.AtomicScaleUpClass}
	return job
}

// TestAtomicRequestRevokedWhenItsNodeGoesOnTheBed: a node that holds a
// Provisioned request's room is deleted (its NodeClaim, as a user or an
// interruption would) before the pods come; the request is CapacityRevoked,
// which Kueue answers by evicting the workload.
func TestAtomicRequestRevokedWhenItsNodeGoesOnTheBed(t *testing.T) {
	b := startGangBed(t, 4)
	pr := b.requestGang()
	b.eventually(bootSettle, b.condition(pr, provreqv1.Provisioned))
	held := strings.Split(string(pr.Status.ProvisioningClassDetails[provisioningrequest.DetailNodes]), ",")
	claims, err := b.claims()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(claims, func(nc v1alpha1.NodeClaim) bool { return nc.Status.NodeName == held[0] })
	if len(held) != 4 || i < 0 {
		t.Fatalf("the request is held on nodes %v; want 4, the first of a nodeclaim", held)
	}
	if err := b.Admin.Delete(context.Background(), &claims[i]); err != nil {
		t.Fatal(err)
	}
	b.eventually(settle, b.condition(pr, provreqv1.CapacityRevoked))
	if msg := apimeta.FindStatusCondition(pr.Status.Conditions, provreqv1.CapacityRevoked).Message; !strings.Contains(msg, held[0]) {
		t.Errorf("CapacityRevoked says %q, which does not name the node deleted, %s", msg, held[0])
	}
}
