package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/clusterautoscaler"
	"github.com/stowage-dev/stowage/controller/simulate"
)

// useNodeGroups replaces the scenario's Cluster Autoscaler node groups with
// the user's own, read from AWS CLI output; a scenario without NodePools gets
// the pools and classes stowage import cluster-autoscaler proposes for them,
// their classes pointed at the simulator's network. Every adjustment is said
// on stderr.
func useNodeGroups(s *simulate.Scenario, files []string, stderr io.Writer) error {
	groups, err := readNodeGroups(files, nil)
	if err != nil {
		return err
	}
	zones := s.Spec.Zones
	ca := &simulate.ClusterAutoscaler{}
	for _, g := range groups {
		ng := simulate.NodeGroup{Name: g.Name, InstanceType: g.InstanceTypes[0], Zones: g.Zones, Min: g.MinSize, Max: g.MaxSize,
			Labels: g.Labels, Taints: g.Taints, AMIFamily: g.AMIFamily, CapacityType: v1alpha1.CapacityTypeOnDemand}
		if len(g.InstanceTypes) > 1 {
			ng.InstanceTypes = g.InstanceTypes
		}
		switch {
		case slices.Equal(g.CapacityTypes, []string{v1alpha1.CapacityTypeSpot}):
			ng.CapacityType = v1alpha1.CapacityTypeSpot
		case !slices.Equal(g.CapacityTypes, []string{v1alpha1.CapacityTypeOnDemand}):
			fmt.Fprintf(stderr, "stowage simulate: node group %s runs %v; the Cluster Autoscaler model runs it on-demand\n", g.Name, g.CapacityTypes)
		}
		if len(ng.Zones) == 0 {
			ng.Zones = zones
			fmt.Fprintf(stderr, "stowage simulate: node group %s names no zones (give its Auto Scaling group's describe-auto-scaling-groups output too); it uses the scenario's %v\n", g.Name, zones)
		}
		ca.NodeGroups = append(ca.NodeGroups, ng)
	}
	s.Spec.ClusterAutoscaler = ca
	if len(s.NodePools) > 0 {
		return nil
	}
	p, err := clusterautoscaler.Propose(groups, clusterautoscaler.Options{})
	if err != nil {
		return fmt.Errorf("proposing pools for the node groups: %w", err)
	}
	discovery := map[string]string{"stowage.dev/discovery": s.Name}
	for _, nc := range p.NodeClasses {
		nc.Spec.SubnetSelectorTerms = []v1alpha1.SelectorTerm{{Tags: discovery}}
		nc.Spec.SecurityGroupSelectorTerms = []v1alpha1.SecurityGroupSelectorTerm{{Tags: discovery}}
	}
	s.NodePools, s.NodeClasses = p.NodePools, p.NodeClasses
	fmt.Fprintf(stderr, "stowage simulate: the scenario has no NodePools: Stowage runs the %d pools stowage import cluster-autoscaler proposes for these node groups\n", len(p.NodePools))
	return nil
}
