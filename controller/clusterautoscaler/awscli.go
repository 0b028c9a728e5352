package clusterautoscaler

// The AWS CLI's JSON output shapes this package reads: only the fields it
// uses; the CLI prints many more, which are ignored.

// describeNodegroupOutput is `aws eks describe-nodegroup`.
type describeNodegroupOutput struct {
	Nodegroup *eksNodegroup `json:"nodegroup"`
}

type eksNodegroup struct {
	NodegroupName string            `json:"nodegroupName"`
	ClusterName   string            `json:"clusterName"`
	CapacityType  string            `json:"capacityType"` // ON_DEMAND, SPOT, CAPACITY_BLOCK
	ScalingConfig *eksScalingConfig `json:"scalingConfig"`
	InstanceTypes []string          `json:"instanceTypes"`
	Subnets       []string          `json:"subnets"`
	AMIType       string            `json:"amiType"` // AL2023_x86_64_STANDARD, BOTTLEROCKET_ARM_64_NVIDIA, ...
	NodeRole      string            `json:"nodeRole"`
	Labels        map[string]string `json:"labels"`
	Taints        []eksTaint        `json:"taints"`
	Resources     *struct {
		AutoScalingGroups []struct {
			Name string `json:"name"`
		} `json:"autoScalingGroups"`
	} `json:"resources"`
	LaunchTemplate *eksLaunchTemplate `json:"launchTemplate"`
	Tags           map[string]string  `json:"tags"`
}

type eksScalingConfig struct {
	MinSize     int `json:"minSize"`
	MaxSize     int `json:"maxSize"`
	DesiredSize int `json:"desiredSize"`
}

type eksTaint struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Effect string `json:"effect"` // NO_SCHEDULE, NO_EXECUTE, PREFER_NO_SCHEDULE
}

type eksLaunchTemplate struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	ID      string `json:"id"`
}

// describeAutoScalingGroupsOutput is `aws autoscaling describe-auto-scaling-groups`.
type describeAutoScalingGroupsOutput struct {
	AutoScalingGroups []asgGroup `json:"AutoScalingGroups"`
}

type asgGroup struct {
	AutoScalingGroupName    string                          `json:"AutoScalingGroupName"`
	LaunchTemplate          *asgLaunchTemplate              `json:"LaunchTemplate"`
	LaunchConfigurationName string                          `json:"LaunchConfigurationName"`
	MixedInstancesPolicy    *asgMixedInstances              `json:"MixedInstancesPolicy"`
	MinSize                 int                             `json:"MinSize"`
	MaxSize                 int                             `json:"MaxSize"`
	DesiredCapacity         int                             `json:"DesiredCapacity"`
	AvailabilityZones       []string                        `json:"AvailabilityZones"`
	VPCZoneIdentifier       string                          `json:"VPCZoneIdentifier"`
	Tags                    []asgTag                        `json:"Tags"`
	Instances               []struct{ InstanceType string } `json:"Instances"`
}

type asgLaunchTemplate struct {
	LaunchTemplateID   string `json:"LaunchTemplateId"`
	LaunchTemplateName string `json:"LaunchTemplateName"`
	Version            string `json:"Version"`
}

type asgMixedInstances struct {
	LaunchTemplate struct {
		LaunchTemplateSpecification asgLaunchTemplate `json:"LaunchTemplateSpecification"`
		Overrides                   []struct {
			InstanceType     string `json:"InstanceType"`
			WeightedCapacity string `json:"WeightedCapacity"`
		} `json:"Overrides"`
	} `json:"LaunchTemplate"`
	InstancesDistribution *struct {
		OnDemandBaseCapacity                *int   `json:"OnDemandBaseCapacity"`
		OnDemandPercentageAboveBaseCapacity *int   `json:"OnDemandPercentageAboveBaseCapacity"`
		SpotAllocationStrategy              string `json:"SpotAllocationStrategy"`
	} `json:"InstancesDistribution"`
}

type asgTag struct {
	Key   string `json:"Key"`
	Value string `json:"Value"`
}

// describeLaunchTemplateVersionsOutput is `aws ec2 describe-launch-template-versions`.
type describeLaunchTemplateVersionsOutput struct {
	LaunchTemplateVersions []struct {
		LaunchTemplateID   string `json:"LaunchTemplateId"`
		LaunchTemplateName string `json:"LaunchTemplateName"`
		VersionNumber      int    `json:"VersionNumber"`
		DefaultVersion     bool   `json:"DefaultVersion"`
		LaunchTemplateData struct {
			InstanceType string `json:"InstanceType"`
			ImageID      string `json:"ImageId"`
		} `json:"LaunchTemplateData"`
	} `json:"LaunchTemplateVersions"`
}
