package checker_test

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler/schedulertest"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

const (
	zone = corev1.LabelTopologyZone
	host = corev1.LabelHostname
	gib  = int64(1) << 30
)

// small: 2 vCPU, 4 GiB, 4 pods; big: 8 vCPU, 32 GiB, 40 pods; both on-demand in z1-z3.
var (
	small = newType("small", 2, 4, 4)
	big   = newType("big", 8, 32, 40)
)

func newType(name string, vcpu, memGiB, pods int64) *cloudprovider.InstanceType {
	var ofs cloudprovider.Offerings
	for i, z := range []string{"z1", "z2", "z3"} {
		ofs = append(ofs, cloudprovider.Offering{Zone: z, CapacityType: v1alpha1.CapacityTypeOnDemand, Price: float64(vcpu) + float64(i)/10, Available: true})
	}
	return schedulertest.NewInstanceType(name, vcpu, memGiB*gib, pods, ofs)
}

// podOpt edits a pod fixture.
type podOpt func(*corev1.Pod)

func pod(name, cpu, mem string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem),
		}}}}},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func labelled(k, v string) podOpt { return func(p *corev1.Pod) { p.Labels[k] = v } }

func nodeSelector(k, v string) podOpt {
	return func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{k: v} }
}

func tolerates(key string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists})
	}
}

func spread(key string, selector map[string]string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, corev1.TopologySpreadConstraint{
			MaxSkew: 1, TopologyKey: key, WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: selector},
		})
	}
}

func affinityTerm(key string, selector map[string]string) corev1.PodAffinityTerm {
	return corev1.PodAffinityTerm{TopologyKey: key, LabelSelector: &metav1.LabelSelector{MatchLabels: selector}}
}

func podAffinity(key string, selector map[string]string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{affinityTerm(key, selector)}}}
	}
}

func antiAffinity(key string, selector map[string]string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{affinityTerm(key, selector)}}}
	}
}

func hostPort(port int32) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: port, HostPort: port}}
	}
}

func claimVolume(name string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name}}})
	}
}

// claim is a new NodeClaim of the default pool pinned to a zone ("" leaves it unpinned).
func claim(name, z string, types []*cloudprovider.InstanceType, pods ...*corev1.Pod) *scheduler.NewNodeClaim {
	reqs := scheduling.NewRequirements(scheduling.NewRequirement(v1alpha1.LabelNodePool, v1alpha1.OperatorIn, schedulertest.DefaultPoolName))
	if z != "" {
		reqs.Add(scheduling.NewRequirement(zone, v1alpha1.OperatorIn, z))
	}
	o, _ := types[0].Offerings.Compatible(reqs).Available().Cheapest()
	return &scheduler.NewNodeClaim{Name: name, NodePool: schedulertest.DefaultPoolName, Requirements: reqs, InstanceTypes: types, Pods: pods, Offering: o}
}

// existing is a registered node of the default pool in zone z with 4 CPU, 8Gi, 10 pods.
func existing(name, z string, pods ...*corev1.Pod) *scheduler.StateNode {
	rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("10")}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{zone: z, host: name, v1alpha1.LabelNodePool: schedulertest.DefaultPoolName}},
		Status:     corev1.NodeStatus{Capacity: rl, Allocatable: rl},
	}
	for _, p := range pods {
		p.Spec.NodeName = name
	}
	return &scheduler.StateNode{Node: n, Pods: pods}
}

// snapshot is a snapshot of the default pool offering small and big.
func snapshot(pending []*corev1.Pod, nodes ...*scheduler.StateNode) *scheduler.Snapshot {
	s := schedulertest.Snapshot(pending, []*cloudprovider.InstanceType{small, big})
	s.Nodes = nodes
	return s
}

func daemonSet(cpu string, selector map[string]string) *appsv1.DaemonSet {
	p := pod("ds", cpu, "0")
	p.Spec.NodeSelector = selector
	return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "ds", Namespace: "kube-system"}, Spec: appsv1.DaemonSetSpec{
		Template: corev1.PodTemplateSpec{Spec: p.Spec}}}
}

// zonalVolume is a bound claim and volume whose node affinity pins zone z.
func zonalVolume(s *scheduler.Snapshot, name, z string) {
	s.PersistentVolumeClaims = append(s.PersistentVolumeClaims, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-" + name}})
	s.PersistentVolumes = append(s.PersistentVolumes, &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-" + name},
		Spec: corev1.PersistentVolumeSpec{NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: zone, Operator: corev1.NodeSelectorOpIn, Values: []string{z}}}}}}}},
	})
}
