package cas

import (
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// NodeGroup is one Auto Scaling group as CA sees it: one instance type, a set
// of zones, one capacity type and a size range. Its template node carries
// Labels plus the instance-type and zone labels, and Taints.
type NodeGroup struct {
	Name         string
	InstanceType string
	// Zones the ASG launches in, in the order it prefers them on a tie.
	Zones []string
	// CapacityType is "on-demand" or "spot"; the model only passes it on.
	CapacityType     string
	MinSize, MaxSize int
	Labels           map[string]string
	Taints           []corev1.Taint
	// Allocatable is a new node's allocatable, net of DaemonSet requests
	// (CA adds DaemonSet pods to its template node); Pods must be set.
	Allocatable scheduling.Resources
}

// Validate reports the first field that cannot work, naming it.
func (g *NodeGroup) Validate() error {
	switch {
	case g.Name == "":
		return errors.New("node group has no name")
	case g.InstanceType == "":
		return fmt.Errorf("node group %s: InstanceType is empty", g.Name)
	case len(g.Zones) == 0:
		return fmt.Errorf("node group %s: Zones is empty; list at least one zone", g.Name)
	case g.MinSize < 0 || g.MaxSize < g.MinSize:
		return fmt.Errorf("node group %s: sizes min %d max %d; need 0 <= MinSize <= MaxSize", g.Name, g.MinSize, g.MaxSize)
	case g.Allocatable.CPU <= 0 || g.Allocatable.Memory <= 0 || g.Allocatable.Pods <= 0:
		return fmt.Errorf("node group %s: Allocatable needs CPU, Memory and Pods above zero", g.Name)
	}
	return nil
}

// requirements are the labels a node of g in zone carries; zone "" stands for
// the template node, which may land in any of the group's zones.
func (g *NodeGroup) requirements(zone string) scheduling.Requirements {
	reqs := scheduling.FromLabels(g.Labels)
	reqs.Add(scheduling.NewRequirement(corev1.LabelInstanceTypeStable, v1alpha1.OperatorIn, g.InstanceType))
	zones := g.Zones
	if zone != "" {
		zones = []string{zone}
	}
	reqs.Add(scheduling.NewRequirement(corev1.LabelTopologyZone, v1alpha1.OperatorIn, slices.Clone(zones)...))
	return reqs
}
