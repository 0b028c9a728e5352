package clusterautoscaler

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Input gathers AWS CLI documents from one or more files; NodeGroups
// resolves them into node groups.
type Input struct {
	managed   []*NodeGroup
	asgs      []*NodeGroup
	templates map[string]string // "id-or-name@version" -> instance type
}

// Read adds the JSON documents of r (one or several, as a shell loop over the
// CLI prints them) to in; name is the file, for errors.
func (in *Input) Read(name string, r io.Reader) error {
	d := json.NewDecoder(r)
	for i := 0; ; i++ {
		var doc map[string]json.RawMessage
		err := d.Decode(&doc)
		if errors.Is(err, io.EOF) {
			if i == 0 {
				return fmt.Errorf("%s: no JSON document", name)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: document %d: %w", name, i+1, err)
		}
		if err := in.add(fmt.Sprintf("%s: document %d", name, i+1), doc); err != nil {
			return err
		}
	}
}

func (in *Input) add(where string, doc map[string]json.RawMessage) error {
	switch {
	case doc["nodegroup"] != nil:
		var out describeNodegroupOutput
		if err := strictJSON(doc, &out); err != nil {
			return fmt.Errorf("%s: reading describe-nodegroup output: %w", where, err)
		}
		g, err := fromManaged(out.Nodegroup, where)
		if err != nil {
			return err
		}
		in.managed = append(in.managed, g)
	case doc["AutoScalingGroups"] != nil:
		var out describeAutoScalingGroupsOutput
		if err := strictJSON(doc, &out); err != nil {
			return fmt.Errorf("%s: reading describe-auto-scaling-groups output: %w", where, err)
		}
		for i := range out.AutoScalingGroups {
			g, err := fromASG(&out.AutoScalingGroups[i], fmt.Sprintf("%s AutoScalingGroups[%d]", where, i))
			if err != nil {
				return err
			}
			in.asgs = append(in.asgs, g)
		}
	case doc["LaunchTemplateVersions"] != nil:
		var out describeLaunchTemplateVersionsOutput
		if err := strictJSON(doc, &out); err != nil {
			return fmt.Errorf("%s: reading describe-launch-template-versions output: %w", where, err)
		}
		in.addTemplates(&out)
	default:
		return fmt.Errorf("%s: not the output of aws eks describe-nodegroup (a \"nodegroup\" key), aws autoscaling describe-auto-scaling-groups (\"AutoScalingGroups\") or aws ec2 describe-launch-template-versions (\"LaunchTemplateVersions\")", where)
	}
	return nil
}

// strictJSON decodes doc into out, failing on a value of the wrong type
// (naming its field); fields this package does not read are ignored, as
// the CLI adds new ones.
func strictJSON(doc map[string]json.RawMessage, out any) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	var typeErr *json.UnmarshalTypeError
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(out); errors.As(err, &typeErr) {
		return fmt.Errorf("field %s: %s is not a %s", typeErr.Field, typeErr.Value, typeErr.Type)
	} else if err != nil {
		return err
	}
	return nil
}

func (in *Input) addTemplates(out *describeLaunchTemplateVersionsOutput) {
	if in.templates == nil {
		in.templates = map[string]string{}
	}
	for _, v := range out.LaunchTemplateVersions {
		for _, ref := range []string{v.LaunchTemplateID, v.LaunchTemplateName} {
			in.templates[fmt.Sprintf("%s@%d", ref, v.VersionNumber)] = v.LaunchTemplateData.InstanceType
			if v.DefaultVersion {
				in.templates[ref+"@$Default"] = v.LaunchTemplateData.InstanceType
			}
		}
	}
}

func fromManaged(ng *eksNodegroup, where string) (*NodeGroup, error) {
	if ng == nil || ng.NodegroupName == "" {
		return nil, fmt.Errorf("%s: nodegroup.nodegroupName is empty", where)
	}
	g := &NodeGroup{Name: ng.NodegroupName, Source: where, Cluster: ng.ClusterName, InstanceTypes: ng.InstanceTypes,
		Subnets: ng.Subnets, AMIFamily: amiFamily(ng.AMIType), NodeRole: roleName(ng.NodeRole)}
	switch ng.CapacityType {
	case "SPOT":
		g.CapacityTypes = []string{"spot"}
	case "CAPACITY_BLOCK":
		g.CapacityTypes = []string{"reserved"}
	default:
		g.CapacityTypes = []string{"on-demand"}
	}
	if ng.ScalingConfig != nil {
		g.MinSize, g.MaxSize, g.DesiredSize = ng.ScalingConfig.MinSize, ng.ScalingConfig.MaxSize, ng.ScalingConfig.DesiredSize
	}
	for k, v := range ng.Labels {
		g.setLabel(k, v)
	}
	for _, t := range ng.Taints {
		effect, ok := eksTaintEffects[t.Effect]
		if !ok {
			return nil, fmt.Errorf("%s: node group %s: taint %s: effect %q is not NO_SCHEDULE, NO_EXECUTE or PREFER_NO_SCHEDULE", where, g.Name, t.Key, t.Effect)
		}
		g.addTaint(corev1.Taint{Key: t.Key, Value: t.Value, Effect: effect})
	}
	if ng.Resources != nil {
		for _, a := range ng.Resources.AutoScalingGroups {
			g.asgNames = append(g.asgNames, a.Name)
		}
	}
	if ng.LaunchTemplate != nil {
		g.launchTemplate = &asgLaunchTemplate{LaunchTemplateID: ng.LaunchTemplate.ID, LaunchTemplateName: ng.LaunchTemplate.Name, Version: ng.LaunchTemplate.Version}
	}
	return g, g.applyTags(ng.Tags)
}

func fromASG(a *asgGroup, where string) (*NodeGroup, error) {
	g := &NodeGroup{Name: a.AutoScalingGroupName, Source: where, MinSize: a.MinSize, MaxSize: a.MaxSize, DesiredSize: a.DesiredCapacity,
		Zones: a.AvailabilityZones, AMIFamily: "al2023", CapacityTypes: []string{"on-demand"}, launchTemplate: a.LaunchTemplate}
	if a.VPCZoneIdentifier != "" {
		g.Subnets = strings.Split(a.VPCZoneIdentifier, ",")
	}
	if m := a.MixedInstancesPolicy; m != nil {
		lt := m.LaunchTemplate.LaunchTemplateSpecification
		g.launchTemplate = &lt
		for _, o := range m.LaunchTemplate.Overrides {
			if o.InstanceType != "" && !slices.Contains(g.InstanceTypes, o.InstanceType) {
				g.InstanceTypes = append(g.InstanceTypes, o.InstanceType)
			}
		}
		g.CapacityTypes = mixedCapacityTypes(m)
	}
	if a.LaunchConfigurationName != "" && g.launchTemplate == nil {
		return nil, fmt.Errorf("%s: Auto Scaling group %s uses launch configuration %s: launch configurations are retired; move it to a launch template, or give its instance type with `aws autoscaling describe-auto-scaling-groups` of a group that uses one", where, g.Name, a.LaunchConfigurationName)
	}
	tags := map[string]string{}
	for _, t := range a.Tags {
		tags[t.Key] = t.Value
	}
	if ng := tags["eks:nodegroup-name"]; ng != "" {
		g.Notes = append(g.Notes, "the Auto Scaling group of managed node group "+ng)
	}
	return g, g.applyTags(tags)
}

// mixedCapacityTypes reads a mixed-instances policy's split: all on-demand
// above the base by default, all spot at 0 %.
func mixedCapacityTypes(m *asgMixedInstances) []string {
	d := m.InstancesDistribution
	if d == nil || d.OnDemandPercentageAboveBaseCapacity == nil || *d.OnDemandPercentageAboveBaseCapacity == 100 {
		return []string{"on-demand"}
	}
	if *d.OnDemandPercentageAboveBaseCapacity == 0 && (d.OnDemandBaseCapacity == nil || *d.OnDemandBaseCapacity == 0) {
		return []string{"spot"}
	}
	return []string{"spot", "on-demand"}
}

// roleName is the name of a role ARN (arn:aws:iam::1:role/path/Name -> Name).
func roleName(arn string) string {
	if i := strings.LastIndex(arn, "/"); i >= 0 {
		return arn[i+1:]
	}
	return arn
}
