package simulate

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/aws/amifamily"
	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/scheduling"
	"github.com/stowage-dev/stowage/controller/simulate/cas"
	"github.com/stowage-dev/stowage/controller/simulate/report"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

// casSystem is the Cluster Autoscaler baseline: fixed node groups of one
// instance type each, scanned every ten seconds, launching through the same
// capacity model with no fallback to another type.
type casSystem struct {
	w        *world
	as       *cas.Autoscaler
	groups   map[string]*cas.NodeGroup
	families map[string]string // group -> AMI family
	// group -> the types its ASG launches, in order
	types map[string][]string
	// group -> its launch template in the emulator
	templates map[string]string
	nextScan  time.Time
	fleets    int
}

func newCASSystem(w *world) (*casSystem, error) {
	spec := w.s.Spec.ClusterAutoscaler
	if spec == nil {
		return nil, fmt.Errorf("Scenario %s: spec.clusterAutoscaler: --compare cas needs the node groups; add them", w.s.Name)
	}
	sys := &casSystem{w: w, groups: map[string]*cas.NodeGroup{}, families: map[string]string{}, templates: map[string]string{}, types: map[string][]string{}}
	var groups []cas.NodeGroup
	for _, g := range spec.NodeGroups {
		info, ok := w.infos[g.InstanceType]
		if !ok {
			return nil, fmt.Errorf("Scenario %s: spec.clusterAutoscaler.nodeGroups %s: instance type %q is not in the catalogue", w.s.Name, g.Name, g.InstanceType)
		}
		sys.types[g.Name] = []string{g.InstanceType}
		for _, t := range g.InstanceTypes {
			if _, ok := w.infos[t]; !ok {
				return nil, fmt.Errorf("Scenario %s: spec.clusterAutoscaler.nodeGroups %s: instance type %q is not in the catalogue", w.s.Name, g.Name, t)
			}
			if !slices.Contains(sys.types[g.Name], t) {
				sys.types[g.Name] = append(sys.types[g.Name], t)
			}
		}
		it := catalogue.NewInstanceType(info, catalogue.Options{Region: w.s.region(), Zones: w.s.zones()}, nil)
		ct := g.CapacityType
		if ct == "" {
			ct = awsemu.CapacityOnDemand
		}
		groups = append(groups, cas.NodeGroup{Name: g.Name, InstanceType: g.InstanceType, Zones: g.Zones, CapacityType: ct,
			MinSize: g.Min, MaxSize: g.Max, Labels: g.Labels, Taints: g.Taints, Allocatable: it.Allocatable()})
		sys.families[g.Name] = g.AMIFamily
		if sys.families[g.Name] == "" {
			sys.families[g.Name] = "al2023"
		}
		// A managed node group's bootstrap: the group's labels and taints
		// in the family's user data, as EKS writes it.
		ud, err := amifamily.Render(sys.families[g.Name], amifamily.Bootstrap{Cluster: w.s.cluster(), Labels: g.Labels, Taints: g.Taints})
		if err != nil {
			return nil, fmt.Errorf("Scenario %s: spec.clusterAutoscaler.nodeGroups %s: %w", w.s.Name, g.Name, err)
		}
		sys.templates[g.Name] = w.emu.AddLaunchTemplate(awsemu.LaunchTemplate{Name: "cas-" + g.Name, HTTPTokens: "required", HopLimit: 1,
			ImageID: w.images[imageParameter(sys.families[g.Name], info.Arch)], UserData: base64.StdEncoding.EncodeToString([]byte(ud.Text))})
	}
	as, err := cas.New(w.clk, groups)
	if err != nil {
		return nil, err
	}
	sys.as = as
	for i := range groups {
		sys.groups[groups[i].Name] = &groups[i]
	}
	w.kube.onWrite = w.observe
	sys.nextScan = w.clk.Now()
	return sys, nil
}

// seedMinimum starts every group at its minimum size, as its ASG would.
func (sys *casSystem) seedMinimum(ctx context.Context) error {
	for _, name := range sortedKeys(sys.groups) {
		g := sys.groups[name]
		for i := range g.MinSize {
			zone := g.Zones[i%len(g.Zones)]
			if _, err := sys.Launch(ctx, g, zone, 1); err != nil {
				return fmt.Errorf("starting node group %s at its minimum size: %w", name, err)
			}
		}
	}
	return nil
}

func (sys *casSystem) step(ctx context.Context) error {
	now := sys.w.clk.Now()
	if now.Before(sys.nextScan) {
		return nil
	}
	sys.nextScan = now.Add(sys.as.Config().ScanInterval)
	removed := map[string]*simInstance{}
	for _, in := range sys.w.instances {
		removed[in.node] = in
	}
	for _, a := range sys.as.RunOnce(ctx, sys) {
		sys.w.out.actions = append(sys.w.out.actions, action{at: a.At.Sub(epoch), what: describeCASAction(a)})
		if in, ok := removed[a.Node]; ok && a.Kind == cas.ActionScaleDown {
			sys.w.out.consolidations = append(sys.w.out.consolidations, report.Consolidation{At: a.At, Method: "scale-down",
				Removed:        []report.Instance{{Name: in.id, Offering: offer(in.instanceType, in.zone, in.capacityType)}},
				SavingsPerHour: in.price})
		}
		if g, ok := sys.groups[a.Group]; ok && a.Kind == cas.ActionScaleUpFailed {
			// A node group has no other type to fall back to: the shortage is
			// reported with nothing chosen instead.
			sys.w.out.fallbacks = append(sys.w.out.fallbacks, report.Fallback{At: a.At,
				Short:  report.Offering{InstanceType: g.InstanceType, Zone: a.Zone, CapacityType: g.CapacityType},
				Reason: fmt.Sprintf("node group %s: %s", g.Name, a.Reason)})
		}
	}
	return nil
}

func (sys *casSystem) start(ctx context.Context) error { return sys.seedMinimum(ctx) }

func (sys *casSystem) next() time.Time { return sys.nextScan }

// imageParameter is the public SSM parameter of a family's standard image.
func imageParameter(family, arch string) string {
	a := "x86_64"
	if arch == "arm64" {
		a = "arm64"
	}
	if family == "bottlerocket" {
		return fmt.Sprintf("/aws/service/bottlerocket/aws-k8s-%s/%s/latest/image_id", kubernetesVersion, a)
	}
	return fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2023/%s/standard/recommended/image_id", kubernetesVersion, a)
}

func describeCASAction(a cas.Action) string {
	s := string(a.Kind) + " " + a.Group
	if a.Zone != "" {
		s += " in " + a.Zone
	}
	if a.Node != "" {
		s += " node " + a.Node
	}
	if a.Count > 0 {
		s += fmt.Sprintf(" (%d)", a.Count)
	}
	if !a.Until.IsZero() {
		s += " until " + a.Until.Sub(epoch).String()
	}
	if a.Reason != "" {
		s += ": " + a.Reason
	}
	return s
}

// Unschedulable implements cas.World: the pods kube-scheduler marked.
func (sys *casSystem) Unschedulable() []*corev1.Pod {
	var out []*corev1.Pod
	for _, sp := range sys.w.sortedPods() {
		if sp.bound.IsZero() && isUnschedulable(sp.pod) {
			out = append(out, sp.pod)
		}
	}
	return out
}

func isUnschedulable(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return true
		}
	}
	return false
}

// Nodes implements cas.World: every instance of a group, Ready once its node registered.
func (sys *casSystem) Nodes() []cas.Node {
	byNode := map[string][]*corev1.Pod{}
	requested := map[string]scheduling.Resources{}
	for _, sp := range sys.w.sortedPods() {
		if sp.node != "" {
			byNode[sp.node] = append(byNode[sp.node], sp.pod)
			requested[sp.node] = requested[sp.node].Add(sp.requests)
		}
	}
	var out []cas.Node
	for _, in := range sys.w.sortedInstances() {
		g, ok := sys.groups[in.group]
		if !ok {
			continue
		}
		n := cas.Node{Name: in.id, Group: in.group, Zone: in.zone, Allocatable: g.Allocatable, Ready: in.node != "", CreatedAt: in.launched}
		if in.node != "" {
			n.Name = in.node
			n.Pods = byNode[in.node]
			n.Requested = requested[in.node]
			n.Requested.Pods = int64(len(n.Pods))
		}
		out = append(out, n)
	}
	return out
}

// Launch implements cas.World: the ASG launches one instance at a time, of
// the first of its types that has capacity in the zone asked (a group of one
// type has no other), and reports a shortage.
func (sys *casSystem) Launch(_ context.Context, g *cas.NodeGroup, zone string, count int) (int, error) {
	for i := range count {
		id, instanceType, err := sys.launchOne(g, zone)
		if err != nil {
			return i, err
		}
		if id == "" {
			return i, cloudprovider.NewInsufficientCapacityError(fmt.Sprintf("node group %s cannot launch %s in %s", g.Name, strings.Join(sys.types[g.Name], ", "), zone),
				cloudprovider.UnavailableOffering{InstanceType: g.InstanceType, Zone: zone, CapacityType: g.CapacityType})
		}
		in := &simInstance{id: id, instanceType: instanceType, zone: zone, capacityType: g.CapacityType,
			group: g.Name}
		in.price = sys.w.price(offer(in.instanceType, in.zone, in.capacityType))
		sys.w.launched(in, sys.families[g.Name])
	}
	return count, nil
}

// launchOne launches one instance of g in zone; an empty id is a shortage of every type.
func (sys *casSystem) launchOne(g *cas.NodeGroup, zone string) (id, instanceType string, err error) {
	for _, t := range sys.types[g.Name] {
		sys.fleets++
		res, err := sys.w.emu.CreateFleet(awsemu.FleetRequest{
			ClientToken: fmt.Sprintf("cas-%s-%d", g.Name, sys.fleets), CapacityType: g.CapacityType, TotalTargetCapacity: 1,
			Overrides:    []awsemu.FleetOverride{{LaunchTemplateID: sys.templates[g.Name], Version: "1", InstanceType: t, Zone: zone}},
			InstanceTags: map[string]string{"aws:autoscaling:groupName": g.Name},
		})
		if err != nil {
			return "", "", err
		}
		if len(res.Instances) > 0 && len(res.Instances[0].InstanceIDs) > 0 {
			return res.Instances[0].InstanceIDs[0], t, nil
		}
	}
	return "", "", nil
}

// Remove implements cas.World: drain (delete the pods, which their
// workloads replace), then terminate the instance.
func (sys *casSystem) Remove(ctx context.Context, nodeName string) error {
	for _, in := range sys.w.sortedInstances() {
		if in.node != nodeName && in.id != nodeName {
			continue
		}
		for _, sp := range sys.w.sortedPods() {
			if sp.node == in.node && in.node != "" {
				if err := sys.w.deletePod(ctx, sp); err != nil {
					return err
				}
			}
		}
		if _, err := sys.w.emu.Terminate(in.id); err != nil {
			return fmt.Errorf("terminating %s: %w", in.id, err)
		}
		sys.w.terminating[in.id] = true
		return nil
	}
	return fmt.Errorf("node %s is not a node group's", nodeName)
}
