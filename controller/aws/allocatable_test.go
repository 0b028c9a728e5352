package aws_test

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/instance"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/nodeboot"
	"github.com/stowage-dev/stowage/internal/userdatacheck"
)

// registered is what the launched instance's kubelet registers, read from
// its user data as its node would (internal/nodeboot, never Stowage's
// formulas).
func registered(t *testing.T, e *env, providerID string) (capacity, allocatable map[string]resource.Quantity) {
	t.Helper()
	id, err := instance.ParseProviderID(providerID)
	if err != nil {
		t.Fatal(err)
	}
	in, _ := e.emu.Instance(id)
	img, _ := e.emu.ImageByID(in.ImageID)
	var spec awsemu.InstanceTypeSpec
	for _, s := range e.emu.InstanceTypes() {
		if s.Name == in.InstanceType {
			spec = s
		}
	}
	node, _, err := userdatacheck.Boot("node", in, spec, "us-east-1", nodeboot.FamilyOfImage(img.Name), nodeboot.Volumes(e.emu, in))
	if err != nil {
		t.Fatal(err)
	}
	capacity, allocatable = map[string]resource.Quantity{}, map[string]resource.Quantity{}
	for k, v := range node.Status.Capacity {
		capacity[string(k)] = v
	}
	for k, v := range node.Status.Allocatable {
		allocatable[string(k)] = v
	}
	return capacity, allocatable
}

// TestPredictedAllocatableIsWhatTheNodeRegisters launches every type of
// the small catalogue under each family and kubelet block (and disks), and
// reads the launch's user data back as the node does: the capacity and
// allocatable the claim predicted at launch are what its kubelet registers.
func TestPredictedAllocatableIsWhatTheNodeRegisters(t *testing.T) {
	kubelets := map[string]*v1alpha1.KubeletConfiguration{
		"defaults":       nil,
		"maxPods":        {MaxPods: ptr.To[int32](20)},
		"podsPerCore":    {MaxPods: ptr.To[int32](110), PodsPerCore: ptr.To[int32](4)},
		"reservations":   {KubeReserved: map[string]string{"cpu": "300m", "memory": "1Gi"}, SystemReserved: map[string]string{"cpu": "100m", "memory": "200Mi", "ephemeral-storage": "2Gi"}},
		"evictionHard":   {EvictionHard: map[string]string{"memory.available": "500Mi"}},
		"evictionNodeFs": {EvictionHard: map[string]string{"nodefs.available": "15%", "memory.available": "5%"}},
		"evictionSoft": {EvictionSoft: map[string]string{"memory.available": "1Gi"},
			EvictionSoftGracePeriod: map[string]metav1.Duration{"memory.available": {Duration: time.Minute}}},
	}
	disks := map[string]func(*v1alpha1.NodeClass){
		"default volume": func(*v1alpha1.NodeClass) {},
		"50Gi root": func(nc *v1alpha1.NodeClass) {
			nc.Spec.BlockDeviceMappings = []v1alpha1.BlockDeviceMapping{{DeviceName: ptr.To("/dev/xvda"),
				EBS: &v1alpha1.BlockDevice{VolumeSize: ptr.To(resource.MustParse("50Gi"))}}, {DeviceName: ptr.To("/dev/xvdb"),
				EBS: &v1alpha1.BlockDevice{VolumeSize: ptr.To(resource.MustParse("60Gi"))}}}
		},
		"RAID0": func(nc *v1alpha1.NodeClass) { nc.Spec.InstanceStorePolicy = ptr.To(v1alpha1.InstanceStorePolicyRAID0) },
	}
	for _, alias := range []string{"al2023@latest", "bottlerocket@latest"} {
		for kname, k := range kubelets {
			for dname, disk := range disks {
				t.Run(fmt.Sprintf("%s/%s/%s", alias, kname, dname), func(t *testing.T) {
					e := newEnv(t, awsemu.SmallCatalogue(), 1)
					e.nc = nodeClass("default", alias)
					e.nc.Spec.Kubelet = k
					disk(e.nc)
					e.cp = e.newProvider(e.asRole)
					for _, spec := range awsemu.SmallCatalogue() {
						claim, err := e.cp.Create(ctx(t), nodeClaim("c-"+spec.Name, []string{spec.Name}, []string{"on-demand"}))
						if err != nil {
							t.Fatalf("%s: %v", spec.Name, err)
						}
						capacity, allocatable := registered(t, e, claim.Status.ProviderID)
						compare(t, spec.Name+" capacity", claim.Status.Capacity, capacity)
						compare(t, spec.Name+" allocatable", claim.Status.Allocatable, allocatable)
					}
				})
			}
		}
	}
}

func compare[L ~map[K]resource.Quantity, K ~string](t *testing.T, what string, predicted L, got map[string]resource.Quantity) {
	t.Helper()
	names := map[string]bool{}
	for k := range predicted {
		names[string(k)] = true
	}
	for k := range got {
		names[k] = true
	}
	for n := range names {
		p, g := predicted[K(n)], got[n]
		if p.Cmp(g) != 0 {
			t.Errorf("%s %s: predicted %s, the node registers %s", what, n, p.String(), g.String())
		}
	}
}
