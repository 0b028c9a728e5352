package v1alpha1_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

func hashPool() *v1alpha1.NodePool {
	return &v1alpha1.NodePool{Spec: v1alpha1.NodePoolSpec{Template: v1alpha1.NodeClaimTemplate{
		ObjectMeta: v1alpha1.TemplateObjectMeta{Labels: map[string]string{"example.com/team": "web"}},
		Spec: v1alpha1.NodeClaimTemplateSpec{
			Requirements: []v1alpha1.NodeSelectorRequirementWithMinValues{
				{Key: v1alpha1.LabelInstanceFamily, Operator: v1alpha1.OperatorIn, Values: []string{"c6i"}}},
			Taints: []corev1.Taint{
				{Key: "example.com/a", Effect: corev1.TaintEffectNoSchedule},
				{Key: "example.com/b", Value: "x", Effect: corev1.TaintEffectNoExecute},
			},
			NodeClassRef: &v1alpha1.NodeClassReference{Name: "default"},
		},
	}}}
}

func TestNodePoolHash(t *testing.T) {
	base := v1alpha1.NodePoolHash(hashPool())
	for _, tc := range []struct {
		name    string
		edit    func(*v1alpha1.NodePool)
		drifted bool
	}{
		{"unchanged", func(*v1alpha1.NodePool) {}, false},
		{"requirement widened", func(np *v1alpha1.NodePool) {
			np.Spec.Template.Spec.Requirements[0].Values = append(np.Spec.Template.Spec.Requirements[0].Values, "m6i")
		}, false},
		{"weight and limits changed", func(np *v1alpha1.NodePool) {
			np.Spec.Weight = ptr.To[int32](50)
			np.Spec.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100")}
		}, false},
		{"taints reordered with a TimeAdded", func(np *v1alpha1.NodePool) {
			ts := np.Spec.Template.Spec.Taints
			ts[0], ts[1] = ts[1], ts[0]
			ts[0].TimeAdded = &metav1.Time{}
		}, false},
		{"server defaults on the reference", func(np *v1alpha1.NodePool) {
			np.Spec.Template.Spec.NodeClassRef.Group, np.Spec.Template.Spec.NodeClassRef.Kind = v1alpha1.Group, "NodeClass"
		}, false},
		{"empty labels map", func(np *v1alpha1.NodePool) {
			np.Spec.Template.ObjectMeta.Labels = nil
			np.Spec.Template.ObjectMeta.Annotations = map[string]string{}
			np.Spec.Template.ObjectMeta.Labels = map[string]string{"example.com/team": "web"}
		}, false},
		{"label value changed", func(np *v1alpha1.NodePool) { np.Spec.Template.ObjectMeta.Labels["example.com/team"] = "api" }, true},
		{"annotation added", func(np *v1alpha1.NodePool) {
			np.Spec.Template.ObjectMeta.Annotations = map[string]string{"example.com/owner": "x"}
		}, true},
		{"taint value changed", func(np *v1alpha1.NodePool) { np.Spec.Template.Spec.Taints[1].Value = "y" }, true},
		{"startup taint added", func(np *v1alpha1.NodePool) {
			np.Spec.Template.Spec.StartupTaints = []corev1.Taint{{Key: "example.com/cni", Effect: corev1.TaintEffectNoSchedule}}
		}, true},
		{"node class renamed", func(np *v1alpha1.NodePool) { np.Spec.Template.Spec.NodeClassRef.Name = "gpu" }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			np := hashPool()
			tc.edit(np)
			if got := v1alpha1.NodePoolHash(np) != base; got != tc.drifted {
				t.Errorf("hash changed = %v, want %v", got, tc.drifted)
			}
		})
	}
}

func TestNodeClassHash(t *testing.T) {
	class := func() *v1alpha1.NodeClass {
		return &v1alpha1.NodeClass{Spec: v1alpha1.NodeClassSpec{
			AMISelectorTerms:           []v1alpha1.AMISelectorTerm{{Alias: "al2023@latest"}},
			SubnetSelectorTerms:        []v1alpha1.SelectorTerm{{Tags: map[string]string{"k": "v"}}},
			SecurityGroupSelectorTerms: []v1alpha1.SecurityGroupSelectorTerm{{ID: "sg-1"}},
			Role:                       "node",
			Kubelet:                    &v1alpha1.KubeletConfiguration{MaxPods: ptr.To[int32](110)},
			BlockDeviceMappings:        []v1alpha1.BlockDeviceMapping{{DeviceName: ptr.To("/dev/xvda"), EBS: &v1alpha1.BlockDevice{VolumeType: ptr.To("gp3")}}},
		}}
	}
	base := v1alpha1.NodeClassHash(class())
	for _, tc := range []struct {
		name    string
		edit    func(*v1alpha1.NodeClass)
		drifted bool
	}{
		{"unchanged", func(*v1alpha1.NodeClass) {}, false},
		{"selectors rewritten", func(nc *v1alpha1.NodeClass) {
			nc.Spec.AMISelectorTerms = []v1alpha1.AMISelectorTerm{{Name: "my-ami"}}
			nc.Spec.SubnetSelectorTerms = []v1alpha1.SelectorTerm{{ID: "subnet-1"}}
			nc.Spec.SecurityGroupSelectorTerms = nil
			nc.Spec.CapacityReservationSelectorTerms = []v1alpha1.CapacityReservationSelectorTerm{{ID: "cr-1"}}
		}, false},
		{"status changed", func(nc *v1alpha1.NodeClass) { nc.Status.InstanceProfile = "p" }, false},
		{"empty tags", func(nc *v1alpha1.NodeClass) { nc.Spec.Tags = map[string]string{} }, false},
		{"root volume marked", func(nc *v1alpha1.NodeClass) { nc.Spec.BlockDeviceMappings[0].RootVolume = true }, false},
		{"volume type", func(nc *v1alpha1.NodeClass) { nc.Spec.BlockDeviceMappings[0].EBS.VolumeType = ptr.To("io2") }, true},
		{"kubelet max pods", func(nc *v1alpha1.NodeClass) { nc.Spec.Kubelet.MaxPods = ptr.To[int32](58) }, true},
		{"user data", func(nc *v1alpha1.NodeClass) { nc.Spec.UserData = ptr.To("#!/bin/sh") }, true},
		{"role", func(nc *v1alpha1.NodeClass) { nc.Spec.Role = "other" }, true},
		{"tags", func(nc *v1alpha1.NodeClass) { nc.Spec.Tags = map[string]string{"team": "web"} }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc := class()
			tc.edit(nc)
			if got := v1alpha1.NodeClassHash(nc) != base; got != tc.drifted {
				t.Errorf("hash changed = %v, want %v", got, tc.drifted)
			}
		})
	}
}
