package provider

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"k8s.io/utils/clock"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowageaws "github.com/stowage-dev/stowage/controller/aws"
	"github.com/stowage-dev/stowage/controller/aws/amifamily"
	"github.com/stowage-dev/stowage/controller/aws/instance"
	"github.com/stowage-dev/stowage/controller/aws/securitygroup"
	"github.com/stowage-dev/stowage/controller/aws/subnet"
	"github.com/stowage-dev/stowage/provider/internal/kube"
)

// classResolver resolves a NodeClass's selectors as the controller does, and
// reads the instances its nodes run on.
type classResolver interface {
	// Resolve returns the image, subnet and security group ids the class's
	// selector terms select.
	Resolve(ctx context.Context, nc *v1alpha1.NodeClass) (*resolvedIDs, error)
	// Instance reads the instance of a node by its provider id.
	Instance(ctx context.Context, providerID string) (*instance.Instance, error)
}

type resolvedIDs struct{ images, subnets, securityGroups []string }

// resolutionDrift finds the claims of a class whose image, subnet or security
// groups the planned selectors no longer select, as the controller's
// CloudProvider.IsDrifted compares them. It runs only when the selectors
// change; without a resolver it says that it could not look.
func resolutionDrift(ctx context.Context, d *driftCount, res classResolver, claims []v1alpha1.NodeClaim, prior, planned map[string]any) error {
	var was, will v1alpha1.NodeClass
	if err := decodeStored(nodeClassKind, prior, &was); err != nil {
		return err
	}
	if err := decodeStored(nodeClassKind, planned, &will); err != nil {
		return err
	}
	if reflect.DeepEqual(selectors(&was), selectors(&will)) {
		return nil
	}
	const cannot = "The selectors of images, subnets or security groups change, and the provider could not resolve them to " +
		"count the nodes launched outside what they now select (%v); those nodes drift too."
	if res == nil {
		d.unchecked = fmt.Sprintf(cannot, "the plan has no AWS access")
		return nil
	}
	ids, err := res.Resolve(ctx, &will)
	if err != nil {
		d.unchecked = fmt.Sprintf(cannot, err)
		return nil
	}
	byWhat := map[string][]string{}
	for _, nc := range claims {
		what, err := outsideSelection(ctx, res, ids, nc)
		if err != nil {
			d.unchecked = fmt.Sprintf(cannot, err)
			return nil
		}
		if what != "" {
			byWhat[what] = append(byWhat[what], nc.Name)
		}
	}
	for _, what := range []string{"image", "subnet", "security groups"} {
		d.add("whose "+what+" the new selectors no longer select", byWhat[what])
	}
	return nil
}

func selectors(nc *v1alpha1.NodeClass) []any {
	return []any{nc.Spec.AMISelectorTerms, nc.Spec.SubnetSelectorTerms, nc.Spec.SecurityGroupSelectorTerms}
}

// outsideSelection names what of a claim's instance the resolution leaves
// out: "image", "subnet", "security groups", or "" for nothing.
func outsideSelection(ctx context.Context, res classResolver, ids *resolvedIDs, nc v1alpha1.NodeClaim) (string, error) {
	if img := nc.Status.ImageID; img != "" && !slices.Contains(ids.images, img) {
		return "image", nil // recorded at launch: no call needed
	}
	if nc.Status.ProviderID == "" {
		return "", nil // not launched yet: it will launch with the new selection
	}
	in, err := res.Instance(ctx, nc.Status.ProviderID)
	if err != nil {
		return "", fmt.Errorf("reading the instance of node %s: %w", nc.Name, err)
	}
	switch {
	case !slices.Contains(ids.images, in.ImageID):
		return "image", nil
	case !slices.Contains(ids.subnets, in.SubnetID):
		return "subnet", nil
	}
	got := slices.Sorted(slices.Values(in.SecurityGroups))
	if len(got) > 0 && !slices.Equal(got, ids.securityGroups) {
		return "security groups", nil
	}
	return "", nil
}

// awsResolver resolves with the controller's own providers, through the
// provider's AWS settings: ec2:DescribeImages, ssm:GetParameter (aliases),
// ec2:DescribeSubnets, ec2:DescribeSecurityGroups and ec2:DescribeInstances.
type awsResolver struct {
	amis      *amifamily.Provider
	subnets   *subnet.Provider
	groups    *securitygroup.Provider
	instances *instance.Provider
}

func newAWSResolver(cfg aws.Config, kubernetesVersion string) *awsResolver {
	c := stowageaws.ClientsFromConfig(cfg)
	return &awsResolver{amis: amifamily.NewProvider(c.SSM, c.EC2, kubernetesVersion), subnets: subnet.NewProvider(c.EC2),
		groups: securitygroup.NewProvider(c.EC2), instances: instance.NewProvider(c.EC2, "", clock.RealClock{}, 0)}
}

func (a *awsResolver) Resolve(ctx context.Context, nc *v1alpha1.NodeClass) (*resolvedIDs, error) {
	var out resolvedIDs
	amis, err := a.amis.Resolve(ctx, nc.Spec.AMISelectorTerms)
	if err != nil {
		return nil, err
	}
	for _, ami := range amis {
		out.images = append(out.images, ami.ID)
	}
	subnets, err := a.subnets.Resolve(ctx, nc.Spec.SubnetSelectorTerms)
	if err != nil {
		return nil, err
	}
	for _, s := range subnets {
		out.subnets = append(out.subnets, s.ID)
	}
	groups, err := a.groups.Resolve(ctx, nc.Spec.SecurityGroupSelectorTerms)
	if err != nil {
		return nil, err
	}
	for _, g := range groups {
		out.securityGroups = append(out.securityGroups, g.ID)
	}
	slices.Sort(out.securityGroups)
	return &out, nil
}

func (a *awsResolver) Instance(ctx context.Context, providerID string) (*instance.Instance, error) {
	id, err := instance.ParseProviderID(providerID)
	if err != nil {
		return nil, err
	}
	return a.instances.Get(ctx, id, time.Time{})
}

// lazyResolver builds the AWS resolver on first use, so that a plan that
// changes no selector needs neither AWS nor the cluster's version.
type lazyResolver struct {
	access *clusterAccess
	kube   *kube.Client
	res    classResolver
	err    error
}

func (l *lazyResolver) get(ctx context.Context) (classResolver, error) {
	if l.res != nil || l.err != nil {
		return l.res, l.err
	}
	cfg, err := l.access.AWS(ctx)
	if err != nil {
		l.err = fmt.Errorf("no AWS access: %w; set aws_region and the AWS credentials (aws_profile or AWS_*) in the provider block", err)
		return nil, l.err
	}
	version, err := l.kube.KubernetesVersion()
	if err != nil {
		l.err = err
		return nil, err
	}
	l.res = newAWSResolver(cfg, version)
	return l.res, nil
}

func (l *lazyResolver) Resolve(ctx context.Context, nc *v1alpha1.NodeClass) (*resolvedIDs, error) {
	res, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return res.Resolve(ctx, nc)
}

func (l *lazyResolver) Instance(ctx context.Context, providerID string) (*instance.Instance, error) {
	res, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return res.Instance(ctx, providerID)
}
