// Package launchtemplate keeps one EC2 launch template per distinct node
// configuration: created once, reused by every launch, deleted when unused.
package launchtemplate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/clock"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/awserrors"
	"github.com/stowage-dev/stowage/controller/aws/sdk"
)

// TagCluster marks the launch templates Stowage manages for a cluster.
const TagCluster = "stowage.dev/cluster"

// Config is everything a launch template fixes.
type Config struct {
	ImageID         string
	SecurityGroups  []string
	InstanceProfile string
	UserData        string // base64
	HTTPTokens      string
	HopLimit        int32
	HTTPEndpoint    string
	// HTTPProtocolIPv6 serves IMDS on its IPv6 address too ("enabled") or not.
	HTTPProtocolIPv6 string
	// AssociatePublicIP, when set, overrides the subnet's public IP setting
	// through the primary network interface, which then carries the
	// security groups (EC2 refuses them at both places).
	AssociatePublicIP *bool
	BlockDevices      []v1alpha1.BlockDeviceMapping
	Tags              map[string]string
	Monitoring        bool
	// CapacityReservationID makes launches target that reservation (reserved
	// offerings); without it the template opts out of open reservations, so that
	// a spot or on-demand launch never silently takes reserved capacity.
	CapacityReservationID string
	// CapacityBlock says the reservation is a Capacity Block: launches into
	// it need the market type capacity-block.
	CapacityBlock bool
}

// hash is stable for equal configurations.
func (c Config) hash() string {
	b, _ := json.Marshal(c) //nolint:errchkjson // plain data
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// Provider creates and finds launch templates.
type Provider struct {
	ec2     sdk.EC2API
	cluster string
	clk     clock.PassiveClock
	log     hclog.Logger

	mu       sync.Mutex
	lastUsed map[string]time.Time // template name -> last launch that used it
}

// NewProvider returns a launch template provider for a cluster.
func NewProvider(ec2API sdk.EC2API, cluster string, clk clock.PassiveClock, log hclog.Logger) *Provider {
	return &Provider{ec2: ec2API, cluster: cluster, clk: clk, log: log, lastUsed: map[string]time.Time{}}
}

// Ensure returns the name of the template for cfg, creating it on first use.
func (p *Provider) Ensure(ctx context.Context, cfg Config) (string, error) {
	name := fmt.Sprintf("stowage/%s/%s", p.cluster, cfg.hash())
	p.mu.Lock()
	_, known := p.lastUsed[name]
	p.lastUsed[name] = p.clk.Now()
	p.mu.Unlock()
	if known {
		return name, nil
	}
	_, err := p.ec2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{name}})
	if err == nil {
		return name, nil
	}
	if !awserrors.IsNotFound(err) {
		p.forget(name)
		return "", fmt.Errorf("describing launch template %s: %w", name, err)
	}
	if err := p.create(ctx, name, cfg); err != nil {
		p.forget(name)
		return "", err
	}
	p.log.Debug("created launch template", "launch_template", name, "image_id", cfg.ImageID)
	return name, nil
}

// Forget drops a template from memory so the next Ensure checks EC2 again
// (after a launch reported it missing).
func (p *Provider) forget(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.lastUsed, name)
}

// Invalidate forgets every template, as when EC2 says one no longer exists.
func (p *Provider) Invalidate() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lastUsed = map[string]time.Time{}
}

func (p *Provider) create(ctx context.Context, name string, cfg Config) error {
	tags := []ec2types.Tag{{Key: aws.String(TagCluster), Value: aws.String(p.cluster)}}
	_, err := p.ec2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(name),
		LaunchTemplateData: Data(cfg),
		TagSpecifications:  []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: tags}},
	})
	if err != nil && awserrors.Code(err) != "InvalidLaunchTemplateName.AlreadyExistsException" {
		return fmt.Errorf("creating launch template %s: %w", name, err)
	}
	return nil
}

// Data is what EC2 is asked to put in the launch template of cfg.
func Data(cfg Config) *ec2types.RequestLaunchTemplateData {
	d := &ec2types.RequestLaunchTemplateData{
		ImageId:            aws.String(cfg.ImageID),
		SecurityGroupIds:   cfg.SecurityGroups,
		IamInstanceProfile: &ec2types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: aws.String(cfg.InstanceProfile)},
		UserData:           aws.String(cfg.UserData),
		Monitoring:         &ec2types.LaunchTemplatesMonitoringRequest{Enabled: aws.Bool(cfg.Monitoring)},
		MetadataOptions: &ec2types.LaunchTemplateInstanceMetadataOptionsRequest{
			HttpTokens:              ec2types.LaunchTemplateHttpTokensState(cfg.HTTPTokens),
			HttpPutResponseHopLimit: aws.Int32(cfg.HopLimit),
			HttpEndpoint:            ec2types.LaunchTemplateInstanceMetadataEndpointState(cfg.HTTPEndpoint),
			HttpProtocolIpv6:        ec2types.LaunchTemplateInstanceMetadataProtocolIpv6(cfg.HTTPProtocolIPv6),
		},
	}
	if cfg.AssociatePublicIP != nil {
		d.SecurityGroupIds = nil
		d.NetworkInterfaces = []ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest{{
			DeviceIndex: aws.Int32(0), AssociatePublicIpAddress: aws.Bool(*cfg.AssociatePublicIP), Groups: cfg.SecurityGroups}}
	}
	keys := make([]string, 0, len(cfg.Tags))
	for k := range cfg.Tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var tags []ec2types.Tag
	for _, k := range keys {
		tags = append(tags, ec2types.Tag{Key: aws.String(k), Value: aws.String(cfg.Tags[k])})
	}
	if len(tags) > 0 {
		d.TagSpecifications = []ec2types.LaunchTemplateTagSpecificationRequest{
			{ResourceType: ec2types.ResourceTypeInstance, Tags: tags}, {ResourceType: ec2types.ResourceTypeVolume, Tags: tags}}
	}
	d.BlockDeviceMappings = blockDevices(cfg.BlockDevices)
	d.CapacityReservationSpecification = &ec2types.LaunchTemplateCapacityReservationSpecificationRequest{
		CapacityReservationPreference: ec2types.CapacityReservationPreferenceNone}
	if cfg.CapacityReservationID != "" {
		d.CapacityReservationSpecification = &ec2types.LaunchTemplateCapacityReservationSpecificationRequest{
			CapacityReservationTarget: &ec2types.CapacityReservationTarget{CapacityReservationId: aws.String(cfg.CapacityReservationID)}}
	}
	if cfg.CapacityBlock {
		d.InstanceMarketOptions = &ec2types.LaunchTemplateInstanceMarketOptionsRequest{MarketType: ec2types.MarketTypeCapacityBlock}
	}
	return d
}

// VolumeGiB is an EBS volume size in whole GiB, rounded up (EBS sizes volumes
// in GiB: 100Gi is 100, 100G is 94); 0 when unset.
func VolumeGiB(q *resource.Quantity) int64 {
	if q == nil || q.Sign() <= 0 {
		return 0
	}
	const gib = int64(1) << 30
	return (q.Value() + gib - 1) / gib
}

func blockDevices(bdms []v1alpha1.BlockDeviceMapping) []ec2types.LaunchTemplateBlockDeviceMappingRequest {
	out := make([]ec2types.LaunchTemplateBlockDeviceMappingRequest, 0, len(bdms))
	for _, b := range bdms {
		m := ec2types.LaunchTemplateBlockDeviceMappingRequest{DeviceName: b.DeviceName}
		if e := b.EBS; e != nil {
			m.Ebs = &ec2types.LaunchTemplateEbsBlockDeviceRequest{Encrypted: e.Encrypted, DeleteOnTermination: e.DeleteOnTermination,
				KmsKeyId: e.KMSKeyID, SnapshotId: e.SnapshotID}
			if e.VolumeSize != nil {
				m.Ebs.VolumeSize = aws.Int32(int32(VolumeGiB(e.VolumeSize))) //nolint:gosec // at most 64 TiB, validated
			}
			if e.VolumeType != nil {
				m.Ebs.VolumeType = ec2types.VolumeType(*e.VolumeType)
			}
			if e.IOPS != nil {
				m.Ebs.Iops = aws.Int32(int32(*e.IOPS)) //nolint:gosec // bounded by validation
			}
			if e.Throughput != nil {
				m.Ebs.Throughput = aws.Int32(int32(*e.Throughput)) //nolint:gosec // bounded by validation
			}
		}
		out = append(out, m)
	}
	return out
}

// DeleteUnused deletes this cluster's templates that no launch has used for
// idle, and returns how many it deleted. A template this process has not used
// (one an earlier process made) counts as used when first seen here, so that a
// restart reuses the templates still in use instead of recreating them.
func (p *Provider) DeleteUnused(ctx context.Context, idle time.Duration) (int, error) {
	in := &ec2.DescribeLaunchTemplatesInput{Filters: []ec2types.Filter{{Name: aws.String("tag:" + TagCluster), Values: []string{p.cluster}}}}
	deleted := 0
	pager := ec2.NewDescribeLaunchTemplatesPaginator(p.ec2, in)
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return deleted, fmt.Errorf("describing launch templates: %w", err)
		}
		for _, lt := range page.LaunchTemplates {
			name := aws.ToString(lt.LaunchTemplateName)
			if !p.idle(name, idle) {
				continue
			}
			if _, err := p.ec2.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: aws.String(name)}); awserrors.IgnoreNotFound(err) != nil {
				return deleted, fmt.Errorf("deleting launch template %s: %w", name, err)
			}
			p.log.Debug("deleted unused launch template", "launch_template", name)
			deleted++
		}
	}
	return deleted, nil
}

// idle reports whether a template has gone unused for d and, if so, forgets it,
// so that a launch from now on checks EC2 (and recreates it) rather than
// trusting memory. A launch that picked the name just before is covered by the
// launch path, which recreates a template EC2 reports missing.
func (p *Provider) idle(name string, d time.Duration) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	used, ok := p.lastUsed[name]
	if !ok {
		p.lastUsed[name] = p.clk.Now()
		return false
	}
	if p.clk.Since(used) < d {
		return false
	}
	delete(p.lastUsed, name)
	return true
}
