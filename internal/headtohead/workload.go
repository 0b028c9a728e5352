package headtohead

import (
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testbed"
)

// Namespace holds the suite's Deployments.
const Namespace = "perf"

// RegistrationDelay is how long after its launch every node registers, on
// both sides: Karpenter's KWOKNodeClass.spec.nodeRegistrationDelay, and the
// bed's boot delay (fixed, not drawn) for Stowage's instances.
const RegistrationDelay = 5 * time.Second

// maxVCPU is the suite's pool restriction on the kwok provider's own types
// (karpenter.kwok.sh/instance-size Lt 32, their vCPU count), applied to the
// catalogue both systems are given, since its AWS names carry no size number.
const maxVCPU = 32

// Catalogue is the instance types both systems choose from: the built-in
// catalogue's types of fewer than 32 vCPUs without GPUs or accelerators,
// which the suite's pods cannot use.
func Catalogue() []catalogue.Info {
	return slices.DeleteFunc(catalogue.Builtin(), func(i catalogue.Info) bool {
		return i.VCPU >= maxVCPU || i.GPUCount > 0 || i.AcceleratorCount > 0
	})
}

// emulatorTypes is Catalogue as the emulator's instance types.
func emulatorTypes() []awsemu.InstanceTypeSpec {
	keep := map[string]bool{}
	for _, i := range Catalogue() {
		keep[i.Name] = true
	}
	return slices.DeleteFunc(awsemu.BuiltinCatalogue(), func(s awsemu.InstanceTypeSpec) bool { return !keep[s.Name] })
}

// prices is the on-demand price per hour of every type of the catalogue.
func prices() map[string]float64 {
	out := map[string]float64{}
	for _, i := range Catalogue() {
		out[i.Name] = i.OnDemandPrice
	}
	return out
}

func zoneNames(b *testbed.Bed) []string {
	var out []string
	for _, z := range b.Emulator.Zones() {
		out = append(out, z.Name)
	}
	return out
}

// Deployment is the workload with replicas pods, labelled app=<name>, its
// spreads and anti-affinity selecting its own pods.
func (w Workload) Deployment(replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": w.Name}
	own := &metav1.LabelSelector{MatchLabels: labels}
	spec := corev1.PodSpec{
		Containers: []corev1.Container{{Name: "app", Image: "registry.invalid/perf:1",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(w.CPU), corev1.ResourceMemory: resource.MustParse(w.Memory)}}}},
	}
	for _, key := range []string{corev1.LabelTopologyZone, corev1.LabelHostname} {
		if (key == corev1.LabelTopologyZone && w.ZoneSpread) || (key == corev1.LabelHostname && w.HostnameSpread) {
			spec.TopologySpreadConstraints = append(spec.TopologySpreadConstraints, corev1.TopologySpreadConstraint{
				MaxSkew: 1, TopologyKey: key, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: own})
		}
	}
	if w.SelfAntiAffinity {
		spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: corev1.LabelHostname, LabelSelector: own}}}}
	}
	meta := metav1.ObjectMeta{Labels: labels}
	if w.DoNotDisrupt {
		meta.Annotations = map[string]string{v1alpha1.AnnotationKarpenterDoNotDisrupt: "true"}
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: w.Name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: own,
			Template: corev1.PodTemplateSpec{ObjectMeta: meta, Spec: spec},
		},
	}
}
