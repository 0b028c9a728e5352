package clusterautoscaler

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// NodeGroups resolves what was read: a managed node group takes its Auto
// Scaling group's zones, CA tags and mixed-instances types when both were
// given (the group is then listed once); a group whose instance type lives in
// its launch template takes it from describe-launch-template-versions. Each
// group that still has no instance type is an error naming the command that
// gives it.
func (in *Input) NodeGroups() ([]*NodeGroup, error) {
	var out []*NodeGroup
	merged := map[*NodeGroup]bool{}
	for _, g := range in.managed {
		for _, a := range in.asgs {
			if slices.Contains(g.asgNames, a.Name) {
				g.absorb(a)
				merged[a] = true
			}
		}
		out = append(out, g)
	}
	for _, a := range in.asgs {
		if !merged[a] {
			out = append(out, a)
		}
	}
	var errs []error
	for _, g := range out {
		if len(g.InstanceTypes) == 0 {
			if err := in.fromTemplate(g); err != nil {
				errs = append(errs, err)
			}
		}
		if g.MaxSize < g.MinSize || g.MaxSize <= 0 {
			errs = append(errs, fmt.Errorf("%s: node group %s: sizes min %d, max %d: need a max above zero and not below min", g.Source, g.Name, g.MinSize, g.MaxSize))
		}
	}
	if len(out) == 0 {
		errs = append(errs, errors.New("no node group in the input: give the output of aws eks describe-nodegroup or aws autoscaling describe-auto-scaling-groups"))
	}
	return out, errors.Join(errs...)
}

// absorb takes from a managed node group's Auto Scaling group what the
// describe-nodegroup output lacks.
func (g *NodeGroup) absorb(a *NodeGroup) {
	if len(g.Zones) == 0 {
		g.Zones = a.Zones
	}
	if len(g.InstanceTypes) == 0 {
		g.InstanceTypes = a.InstanceTypes
	}
	if g.launchTemplate == nil {
		g.launchTemplate = a.launchTemplate
	}
	for k, v := range a.Labels {
		if _, ok := g.Labels[k]; !ok {
			g.setLabel(k, v)
		}
	}
	for _, t := range a.Taints {
		g.addTaint(t)
	}
	for k, v := range a.Resources {
		if g.Resources == nil {
			g.Resources = map[string]string{}
		}
		g.Resources[k] = v
	}
}

// fromTemplate finds g's instance type in its launch template's version.
func (in *Input) fromTemplate(g *NodeGroup) error {
	lt := g.launchTemplate
	if lt == nil {
		return fmt.Errorf("%s: node group %s has no instance types and no launch template", g.Source, g.Name)
	}
	ref := lt.LaunchTemplateID
	if ref == "" {
		ref = lt.LaunchTemplateName
	}
	version := lt.Version
	if version == "" || version == "$Latest" {
		version = in.latest(ref)
	}
	for _, r := range []string{lt.LaunchTemplateID, lt.LaunchTemplateName} {
		if t := in.templates[r+"@"+version]; t != "" {
			g.InstanceTypes = []string{t}
			return nil
		}
	}
	return fmt.Errorf("%s: node group %s: its instance type is in launch template %s version %s: add the output of `aws ec2 describe-launch-template-versions --launch-template-id %s` to the input",
		g.Source, g.Name, ref, lt.Version, ref)
}

// latest is the highest version read of a launch template, as text.
func (in *Input) latest(ref string) string {
	var versions []int
	for k := range in.templates {
		if name, v, ok := strings.Cut(k, "@"); ok && name == ref {
			if n, err := strconv.Atoi(v); err == nil {
				versions = append(versions, n)
			}
		}
	}
	if len(versions) == 0 {
		return "$Latest"
	}
	sort.Ints(versions)
	return strconv.Itoa(versions[len(versions)-1])
}
