package karpenter

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

func (c *converter) nodeClass() error {
	var in EC2NodeClass
	if err := c.decode(&in); err != nil {
		return err
	}
	s := in.Spec
	out := &v1alpha1.NodeClass{ObjectMeta: c.meta(in.ObjectMeta)}
	out.APIVersion, out.Kind = v1alpha1.SchemeGroupVersion.String(), "NodeClass"
	out.Spec = v1alpha1.NodeClassSpec{
		AMISelectorTerms:    c.amiTerms(s.AMISelectorTerms),
		AMIFamily:           c.amiFamily(s.AMIFamily, s.AMISelectorTerms),
		SubnetSelectorTerms: s.SubnetSelectorTerms, SecurityGroupSelectorTerms: s.SecurityGroupSelectorTerms,
		CapacityReservationSelectorTerms: s.CapacityReservationSelectorTerms,
		Role:                             s.Role, InstanceProfile: s.InstanceProfile,
		BlockDeviceMappings: c.blockDevices(s.BlockDeviceMappings),
		MetadataOptions:     s.MetadataOptions, UserData: s.UserData, Tags: s.Tags, Kubelet: s.Kubelet,
		AssociatePublicIPAddress: s.AssociatePublicIPAddress, DetailedMonitoring: s.DetailedMonitoring,
		InstanceStorePolicy: s.InstanceStorePolicy,
	}
	for _, f := range []struct {
		name string
		set  bool
		v    any
	}{{"ipPrefixCount", s.IPPrefixCount != nil, s.IPPrefixCount}, {"enclaveOptions", s.EnclaveOptions != nil, s.EnclaveOptions}, {"context", s.Context != nil, s.Context}} {
		if f.set {
			c.note("spec."+f.name, valueOf(f.v), "not converted: Stowage's launch template has no %s; nodes launch without it", f.name)
		}
	}
	if len(in.Status) > 0 {
		out.Status.Subnets = resolvedSubnets(in.Status)
		c.quiet("status", "not converted but for its subnets (a snapshot's zones): the status is what Karpenter resolved; Stowage resolves the selectors again")
	}
	c.placeholders(out)
	if len(c.refusals) == 0 {
		defaulted := out.DeepCopy()
		defaulted.SetDefaults()
		c.validate(defaulted.Validate())
	}
	c.out.NodeClass = out
	return nil
}

// amiTerms keeps the image terms, refusing the families Stowage cannot
// bootstrap and images named by an SSM parameter.
func (c *converter) amiTerms(in []AMISelectorTerm) []v1alpha1.AMISelectorTerm {
	out := make([]v1alpha1.AMISelectorTerm, 0, len(in))
	for i, t := range in {
		field := fmt.Sprintf("spec.amiSelectorTerms[%d]", i)
		family, _, _ := strings.Cut(t.Alias, "@")
		if why := unsupportedFamily(family); why != "" {
			c.refuse(field+".alias", "%s: %s", t.Alias, why)
		}
		if t.SSMParameter != "" {
			c.refuse(field+".ssmParameter", "Stowage does not read image ids from SSM parameters; look the image up (aws ssm get-parameter --name %s) and select it by id", t.SSMParameter)
		}
		out = append(out, v1alpha1.AMISelectorTerm{Alias: t.Alias, Tags: t.Tags, ID: t.ID, Name: t.Name, Owner: t.Owner})
	}
	return out
}

// unsupportedFamily says why Stowage cannot run a Karpenter image family, or "".
func unsupportedFamily(family string) string {
	switch strings.ToLower(family) {
	case "al2":
		return "Amazon Linux 2 images are not supported (EKS publishes none from Kubernetes 1.33 on): use al2023@latest, and move AL2 user data (bootstrap.sh flags) to an AL2023 NodeConfig"
	case "windows2019", "windows2022", "windows2025":
		return "Windows images are not supported: Stowage bootstraps Linux nodes only; keep Windows pools on Karpenter"
	}
	return ""
}

// amiFamily keeps amiFamily for the families Stowage bootstraps.
func (c *converter) amiFamily(in *string, terms []AMISelectorTerm) *string {
	if in == nil {
		for _, t := range terms {
			if t.Alias != "" {
				return nil
			}
		}
		c.note("spec.amiFamily", "", "not set and no alias: the images get amiFamily %s (userData as written, no bootstrap); set AL2023 or Bottlerocket if they are EKS-optimized images", v1alpha1.AMIFamilyCustom)
		return nil
	}
	if why := unsupportedFamily(*in); why != "" {
		c.refuse("spec.amiFamily", "%s: %s", *in, why)
		return nil
	}
	return in
}

// blockDevices keeps the volumes, leaving out the initialization rate.
func (c *converter) blockDevices(in []BlockDeviceMapping) []v1alpha1.BlockDeviceMapping {
	var out []v1alpha1.BlockDeviceMapping
	for i, m := range in {
		o := v1alpha1.BlockDeviceMapping{DeviceName: m.DeviceName, RootVolume: m.RootVolume}
		if e := m.EBS; e != nil {
			o.EBS = &v1alpha1.BlockDevice{VolumeSize: e.VolumeSize, VolumeType: e.VolumeType, IOPS: e.IOPS, Throughput: e.Throughput,
				Encrypted: e.Encrypted, KMSKeyID: e.KMSKeyID, DeleteOnTermination: e.DeleteOnTermination, SnapshotID: e.SnapshotID}
			if e.VolumeInitializationRate != nil {
				c.note(fmt.Sprintf("spec.blockDeviceMappings[%d].ebs.volumeInitializationRate", i), valueOf(*e.VolumeInitializationRate),
					"not converted: Stowage does not set a volume initialization rate; the snapshot initializes at EBS's default rate")
			}
		}
		out = append(out, o)
	}
	return out
}

// resolvedSubnets reads the subnets Karpenter resolved, which give a
// snapshot its zones; their shape is Stowage's.
func resolvedSubnets(status json.RawMessage) []v1alpha1.Subnet {
	var st struct {
		Subnets []v1alpha1.Subnet `json:"subnets"`
	}
	if json.Unmarshal(status, &st) != nil {
		return nil
	}
	return st.Subnets
}
