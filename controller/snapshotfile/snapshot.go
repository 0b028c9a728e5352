package snapshotfile

import (
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/manifest"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// validate defaults and checks the Stowage objects and the pods' resources,
// and checks that bound pods name nodes of the snapshot; every error is on
// its object's line.
func (o *Objects) validate() error {
	var errs []error
	classes := map[string]bool{}
	for _, nc := range o.NodeClasses {
		nc.SetDefaults()
		errs = o.fieldErrors(errs, nc, nc.Validate())
		classes[nc.Name] = true
	}
	for _, np := range o.NodePools {
		np.SetDefaults()
		errs = o.fieldErrors(errs, np, np.Validate())
		if ref := np.Spec.Template.Spec.NodeClassRef; ref != nil && len(o.NodeClasses) > 0 && !classes[ref.Name] {
			errs = o.fieldErrors(errs, np, field.ErrorList{field.Invalid(field.NewPath("spec", "template", "spec", "nodeClassRef", "name"), ref.Name,
				fmt.Sprintf("NodeClass %q is not in the snapshot; add it or fix the name", ref.Name))})
		}
	}
	nodes := map[string]bool{}
	for _, n := range o.Nodes {
		nodes[n.Name] = true
	}
	for _, nc := range o.NodeClaims {
		nodes[nc.Name] = true
	}
	for _, p := range o.Pods {
		errs = o.fieldErrors(errs, p, manifest.ValidatePodSpec(field.NewPath("spec"), &p.Spec))
		if p.Spec.NodeName != "" && !nodes[p.Spec.NodeName] {
			errs = o.fieldErrors(errs, p, field.ErrorList{field.Invalid(field.NewPath("spec", "nodeName"), p.Spec.NodeName,
				fmt.Sprintf("node %q is not in the snapshot; add the Node or remove nodeName to treat the pod as pending", p.Spec.NodeName))})
		}
	}
	for _, ds := range o.DaemonSets {
		errs = o.fieldErrors(errs, ds, manifest.ValidatePodSpec(field.NewPath("spec", "template", "spec"), &ds.Spec.Template.Spec))
	}
	for _, t := range o.templates() {
		path := field.NewPath("spec", "template", "spec")
		if _, ok := t.obj.(*corev1.PodTemplate); ok {
			path = field.NewPath("template", "spec")
		}
		errs = o.fieldErrors(errs, t.obj, manifest.ValidatePodSpec(path, t.spec))
	}
	return errors.Join(errs...)
}

// fieldErrors appends obj's validation errors, each on its line.
func (o *Objects) fieldErrors(errs []error, obj any, list field.ErrorList) []error {
	if len(list) == 0 {
		return errs
	}
	if m, ok := o.where[obj]; ok {
		return append(errs, m.FieldErrors(list)...)
	}
	return append(errs, list.ToAggregate())
}

// Offering names an offering to mark unavailable: a type in a zone, for one
// capacity type or, when CapacityType is empty, all of them.
type Offering struct {
	InstanceType, Zone, CapacityType string
}

// Options say how to build instance types for the snapshot.
type Options struct {
	Infos []catalogue.Info
	// Defaults supply the region and zones when no NodeClass status lists subnets.
	Defaults    catalogue.Options
	Unavailable []Offering
}

// Snapshot turns the objects into the scheduler's input.
func (o *Objects) Snapshot(opts Options) *scheduler.Snapshot {
	s := &scheduler.Snapshot{NodePools: o.NodePools, NodeClasses: map[string]*v1alpha1.NodeClass{},
		InstanceTypes: map[string][]*cloudprovider.InstanceType{}, DaemonSets: o.DaemonSets,
		PersistentVolumeClaims: o.PersistentVolumeClaims, PersistentVolumes: o.PersistentVolumes, StorageClasses: o.StorageClasses}
	for _, nc := range o.NodeClasses {
		s.NodeClasses[nc.Name] = nc
	}
	for _, np := range o.NodePools {
		s.InstanceTypes[np.Name] = instanceTypes(s.NodeClasses[nodeClassName(np)], opts)
	}
	s.Pods, s.Nodes = o.stateNodes()
	if len(o.PriorityClasses) > 0 {
		s.PriorityClasses = map[string]int32{}
		for _, pc := range o.PriorityClasses {
			s.PriorityClasses[pc.Name] = pc.Value
		}
	}
	return s
}

func nodeClassName(np *v1alpha1.NodePool) string {
	if ref := np.Spec.Template.Spec.NodeClassRef; ref != nil {
		return ref.Name
	}
	return ""
}

func instanceTypes(nc *v1alpha1.NodeClass, opts Options) []*cloudprovider.InstanceType {
	co := opts.Defaults
	if nc != nil {
		co.Kubelet = nc.Spec.Kubelet
		co.RootVolumeGiB = rootVolumeGiB(nc)
		co.InstanceStoreRAID0 = nc.Spec.InstanceStorePolicy != nil && *nc.Spec.InstanceStorePolicy == v1alpha1.InstanceStorePolicyRAID0
		co.Bottlerocket = nc.Spec.BootstrapFamily() == "bottlerocket"
		if zones := subnetZones(nc); len(zones) > 0 {
			co.Zones = zones
		}
	}
	types := catalogue.InstanceTypes(opts.Infos, co)
	for _, it := range types {
		for i, of := range it.Offerings {
			if isUnavailable(opts.Unavailable, it.Name, of) {
				it.Offerings[i].Available = false
			}
		}
	}
	return types
}

// rootVolumeGiB is the size, in whole GiB rounded down, of the block device
// mapping marked rootVolume, which backs ephemeral storage; 0 (the catalogue's
// default) when there is none.
func rootVolumeGiB(nc *v1alpha1.NodeClass) int64 {
	for _, m := range nc.Spec.BlockDeviceMappings {
		if m.RootVolume && m.EBS != nil && m.EBS.VolumeSize != nil {
			return m.EBS.VolumeSize.Value() >> 30
		}
	}
	return 0
}

func subnetZones(nc *v1alpha1.NodeClass) []string {
	var zones []string
	for _, s := range nc.Status.Subnets {
		if !slices.Contains(zones, s.Zone) {
			zones = append(zones, s.Zone)
		}
	}
	slices.Sort(zones)
	return zones
}

func isUnavailable(list []Offering, name string, of cloudprovider.Offering) bool {
	return slices.ContainsFunc(list, func(u Offering) bool {
		return u.InstanceType == name && u.Zone == of.Zone && (u.CapacityType == "" || u.CapacityType == of.CapacityType)
	})
}

// stateNodes splits pods into pending and bound, and joins nodes with their claims.
func (o *Objects) stateNodes() ([]*corev1.Pod, []*scheduler.StateNode) {
	byName := map[string]*scheduler.StateNode{}
	var nodes []*scheduler.StateNode
	for _, n := range o.Nodes {
		sn := &scheduler.StateNode{Node: n, MarkedForDeletion: n.DeletionTimestamp != nil}
		byName[n.Name] = sn
		nodes = append(nodes, sn)
	}
	for _, nc := range o.NodeClaims {
		if sn, ok := byName[nc.Status.NodeName]; ok && nc.Status.NodeName != "" {
			sn.NodeClaim = nc
			byName[nc.Name] = sn
			continue
		}
		sn := &scheduler.StateNode{NodeClaim: nc, MarkedForDeletion: nc.DeletionTimestamp != nil}
		byName[nc.Name] = sn
		nodes = append(nodes, sn)
	}
	var pending []*corev1.Pod
	for _, p := range o.Pods {
		switch {
		case p.Spec.NodeName != "":
			byName[p.Spec.NodeName].Pods = append(byName[p.Spec.NodeName].Pods, p)
		case p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.DeletionTimestamp != nil:
		default:
			pending = append(pending, p)
		}
	}
	return pending, nodes
}
