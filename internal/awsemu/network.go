package awsemu

import (
	"fmt"
	"strings"
	"time"
)

// Subnet is an emulated VPC subnet.
type Subnet struct {
	ID           string
	VpcID        string
	Zone         string
	CIDR         string
	AvailableIPs int
	Tags         map[string]string
}

// SecurityGroup is an emulated security group.
type SecurityGroup struct {
	ID    string
	Name  string
	VpcID string
	Tags  map[string]string
}

// Image is an emulated AMI.
type Image struct {
	ID           string
	Name         string
	Architecture string // x86_64 or arm64
	OwnerID      string
	CreationDate time.Time
	Tags         map[string]string
	Deprecated   bool
	// RootSnapshot is the EBS snapshot of the image's root volume (every
	// EKS AMI is EBS-backed); AddImage gives one when empty.
	RootSnapshot string
	// RootVolumeSize is that volume's size in GiB; 20 when zero.
	RootVolumeSize int32
}

// LaunchTemplate is an emulated launch template; only the data a launch uses is kept.
type LaunchTemplate struct {
	ID             string
	Name           string
	ImageID        string
	InstanceType   string
	SecurityGroups []string
	ProfileName    string
	ProfileARN     string
	UserData       string
	HTTPTokens     string
	HopLimit       int32
	// HTTPProtocolIPv6 is the metadata options' enabled or disabled.
	HTTPProtocolIPv6 string
	// NetworkInterfaces, when set, are the instance's interfaces, the
	// security groups among them.
	NetworkInterfaces []NetworkInterface
	Tags              map[string]string // tags on the template itself
	InstanceTags      map[string]string // TagSpecifications for instances
	// TagSpecs are the template's TagSpecifications by resource type
	// (instance, volume, network-interface, spot-instances-request).
	TagSpecs       map[string]map[string]string
	BlockDevices   []BlockDevice
	KeyName        string // key pair, when set
	PlacementGroup string // placement group name, when set
	CreateTime     time.Time
	// ReservationPreference is CapacityReservationSpecification's preference:
	// open (the default), none or capacity-reservations-only.
	ReservationPreference string
	// ReservationTarget is the Capacity Reservation the template targets, if any.
	ReservationTarget string
	// MarketType is InstanceMarketOptions.MarketType: spot, capacity-block,
	// or empty.
	MarketType string
}

// NetworkInterface is one network interface of a launch template.
type NetworkInterface struct {
	DeviceIndex int
	// AssociatePublicIP is nil when the subnet's setting stands.
	AssociatePublicIP *bool
	Groups            []string
}

// instanceGroups are the security groups an instance of the template gets:
// its primary interface's, when it names interfaces.
func (lt *LaunchTemplate) instanceGroups() []string {
	for _, ni := range lt.NetworkInterfaces {
		if ni.DeviceIndex == 0 {
			return append([]string(nil), ni.Groups...)
		}
	}
	return append([]string(nil), lt.SecurityGroups...)
}

// BlockDevice is one block device mapping of a launch template.
type BlockDevice struct {
	DeviceName string
	VolumeSize int32
	VolumeType string
	Encrypted  bool
	SnapshotID string // the snapshot the volume is created from, when set
}

type networkState struct {
	subnets map[string]*Subnet
	sgs     map[string]*SecurityGroup
	images  map[string]*Image
}

func (n *networkState) init() {
	if n.subnets == nil {
		n.subnets, n.sgs, n.images = map[string]*Subnet{}, map[string]*SecurityGroup{}, map[string]*Image{}
	}
}

// AddSubnet adds a subnet; an empty ID gets a generated one, which is returned.
func (e *Emulator) AddSubnet(s Subnet) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.network.init()
	if s.ID == "" {
		s.ID = e.newID("subnet")
	}
	if s.VpcID == "" {
		s.VpcID = "vpc-0000000000000001"
	}
	if s.CIDR == "" {
		s.CIDR = fmt.Sprintf("10.0.%d.0/24", len(e.network.subnets))
	}
	s.Tags = cloneTags(s.Tags)
	e.network.subnets[s.ID] = &s
	return s.ID
}

// SetSubnetFreeIPs sets how many addresses a subnet has left.
func (e *Emulator) SetSubnetFreeIPs(id string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if s, ok := e.network.subnets[id]; ok {
		s.AvailableIPs = n
	}
}

// AddSecurityGroup adds a security group and returns its id.
func (e *Emulator) AddSecurityGroup(g SecurityGroup) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.network.init()
	if g.ID == "" {
		g.ID = e.newID("sg")
	}
	if g.VpcID == "" {
		g.VpcID = "vpc-0000000000000001"
	}
	g.Tags = cloneTags(g.Tags)
	e.network.sgs[g.ID] = &g
	return g.ID
}

// AddImage adds an AMI and returns its id.
func (e *Emulator) AddImage(img Image) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.network.init()
	if img.ID == "" {
		img.ID = e.newID("ami")
	}
	if img.OwnerID == "" {
		img.OwnerID = "amazon"
	}
	if img.CreationDate.IsZero() {
		img.CreationDate = e.clk.Now()
	}
	if img.RootSnapshot == "" { // from the image's id: the seeded ids stay as they were
		img.RootSnapshot = "snap-" + strings.TrimPrefix(img.ID, "ami-")
	}
	if img.RootVolumeSize == 0 {
		img.RootVolumeSize = 20
	}
	img.Tags = cloneTags(img.Tags)
	e.network.images[img.ID] = &img
	return img.ID
}

// PutParameter sets an SSM parameter, as the public AMI parameters are.
func (e *Emulator) PutParameter(name, value string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.params[name] = value
}

// LaunchTemplates returns copies of every launch template.
func (e *Emulator) LaunchTemplates() []LaunchTemplate {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]LaunchTemplate, 0, len(e.lts))
	for _, lt := range e.lts {
		out = append(out, *lt)
	}
	return out
}

// LaunchTemplateByID returns the launch template with the id, as a node's
// boot reads its block devices from it.
func (e *Emulator) LaunchTemplateByID(id string) (LaunchTemplate, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	lt, ok := e.lts[id]
	if !ok {
		return LaunchTemplate{}, false
	}
	return *lt, true
}

// ImageByID returns the image with the id, as a node knows which image it runs.
func (e *Emulator) ImageByID(id string) (Image, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	img, ok := e.network.images[id]
	if !ok {
		return Image{}, false
	}
	return *img, true
}

// SeedDefaultNetwork adds one subnet per zone (tagged stowage.dev/discovery=<cluster>)
// and one tagged security group, and returns their ids.
func (e *Emulator) SeedDefaultNetwork(cluster string) (subnets []string, sg string) {
	for _, z := range e.cfg.Zones {
		subnets = append(subnets, e.AddSubnet(Subnet{Zone: z.Name, AvailableIPs: 4000,
			Tags: map[string]string{"stowage.dev/discovery": cluster, "Name": cluster + "-" + z.Name}}))
	}
	sg = e.AddSecurityGroup(SecurityGroup{Name: cluster + "-nodes",
		Tags: map[string]string{"stowage.dev/discovery": cluster}})
	return subnets, sg
}

// SeedEKSImages publishes al2023 and bottlerocket images for a Kubernetes
// version under their public SSM parameter names, for x86_64 and arm64 and the
// GPU variants, and returns parameter name -> image id.
func (e *Emulator) SeedEKSImages(k8sVersion string) map[string]string {
	out := map[string]string{}
	add := func(param, name, arch string) {
		id := e.AddImage(Image{Name: name, Architecture: arch})
		e.PutParameter(param, id)
		out[param] = id
	}
	for _, a := range []string{"x86_64", "arm64"} {
		add(fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2023/%s/standard/recommended/image_id", k8sVersion, a),
			fmt.Sprintf("amazon-eks-node-al2023-%s-standard-%s-v1", a, k8sVersion), a)
		add(fmt.Sprintf("/aws/service/bottlerocket/aws-k8s-%s/%s/latest/image_id", k8sVersion, a),
			fmt.Sprintf("bottlerocket-aws-k8s-%s-%s-v1", k8sVersion, a), a)
	}
	add(fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2023/x86_64/nvidia/recommended/image_id", k8sVersion),
		fmt.Sprintf("amazon-eks-node-al2023-x86_64-nvidia-%s-v1", k8sVersion), "x86_64")
	add(fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2023/x86_64/neuron/recommended/image_id", k8sVersion),
		fmt.Sprintf("amazon-eks-node-al2023-x86_64-neuron-%s-v1", k8sVersion), "x86_64")
	add(fmt.Sprintf("/aws/service/bottlerocket/aws-k8s-%s-nvidia/x86_64/latest/image_id", k8sVersion),
		fmt.Sprintf("bottlerocket-aws-k8s-%s-nvidia-x86_64-v1", k8sVersion), "x86_64")
	return out
}

// AddLaunchTemplate adds a launch template, as an Auto Scaling group's would
// be, and returns its id.
func (e *Emulator) AddLaunchTemplate(lt LaunchTemplate) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	lt.ID = "lt-" + e.newID("x")[2:]
	lt.CreateTime = e.clk.Now()
	lt.Tags, lt.InstanceTags = cloneTags(lt.Tags), cloneTags(lt.InstanceTags)
	e.lts[lt.ID] = &lt
	return lt.ID
}
