// Package amifamily resolves a NodeClass's AMI selector terms (aliases through
// the public SSM parameters, or tags, names and ids through DescribeImages) and
// builds the bootstrap user data of each AMI family.
package amifamily

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/awserrors"
	"github.com/stowage-dev/stowage/controller/aws/sdk"
	"github.com/stowage-dev/stowage/controller/aws/subnet"
)

// AMI families Stowage can bootstrap.
const (
	FamilyAL2023       = "al2023"
	FamilyBottlerocket = "bottlerocket"
	FamilyCustom       = "custom"
)

// NeuronFamilies are the instance families that need the Neuron AMI variant.
var NeuronFamilies = []string{"inf1", "inf2", "trn1", "trn1n", "trn2"}

// Provider resolves AMIs.
type Provider struct {
	ssm        sdk.SSMAPI
	ec2        sdk.EC2API
	k8sVersion string
}

// NewProvider returns an AMI provider for a Kubernetes minor version (e.g. "1.37").
func NewProvider(ssmAPI sdk.SSMAPI, ec2API sdk.EC2API, k8sVersion string) *Provider {
	return &Provider{ssm: ssmAPI, ec2: ec2API, k8sVersion: k8sVersion}
}

// Family returns how a NodeClass's nodes bootstrap: its amiFamily when set
// (Custom, or the family of images selected by id, name or tags), else its
// alias's family, else custom.
func Family(nc *v1alpha1.NodeClass) string { return nc.Spec.BootstrapFamily() }

// Resolve returns the images the terms select, each with the requirements
// (architecture, GPU or Neuron variant) of the instance types it serves.
func (p *Provider) Resolve(ctx context.Context, terms []v1alpha1.AMISelectorTerm) ([]v1alpha1.AMI, error) {
	var out []v1alpha1.AMI
	for _, t := range terms {
		var amis []v1alpha1.AMI
		var err error
		if t.Alias != "" {
			amis, err = p.alias(ctx, t.Alias)
		} else {
			amis, err = p.selected(ctx, t)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, amis...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("resolving images: no image matches the amiSelectorTerms")
	}
	return out, nil
}

type variant struct {
	param string
	arch  string
	reqs  []v1alpha1.NodeSelectorRequirementWithMinValues
}

func (p *Provider) variants(family, version string) ([]variant, error) {
	std := []v1alpha1.NodeSelectorRequirementWithMinValues{
		{Key: v1alpha1.LabelInstanceGPUCount, Operator: v1alpha1.OperatorDoesNotExist},
		{Key: v1alpha1.LabelInstanceFamily, Operator: v1alpha1.OperatorNotIn, Values: NeuronFamilies},
	}
	gpu := []v1alpha1.NodeSelectorRequirementWithMinValues{{Key: v1alpha1.LabelInstanceGPUCount, Operator: v1alpha1.OperatorExists}}
	neuron := []v1alpha1.NodeSelectorRequirementWithMinValues{{Key: v1alpha1.LabelInstanceFamily, Operator: v1alpha1.OperatorIn, Values: NeuronFamilies}}
	k := p.k8sVersion
	switch family {
	case FamilyAL2023:
		path := func(arch, v string) string {
			leaf := "recommended"
			if version != "latest" {
				leaf = fmt.Sprintf("amazon-eks-node-al2023-%s-%s-%s-%s", arch, v, k, version)
			}
			return fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2023/%s/%s/%s/image_id", k, arch, v, leaf)
		}
		return []variant{{path("x86_64", "standard"), "amd64", std}, {path("arm64", "standard"), "arm64", std},
			{path("x86_64", "nvidia"), "amd64", gpu}, {path("x86_64", "neuron"), "amd64", neuron}}, nil
	case FamilyBottlerocket:
		path := func(suffix, arch string) string {
			return fmt.Sprintf("/aws/service/bottlerocket/aws-k8s-%s%s/%s/%s/image_id", k, suffix, arch, strings.TrimPrefix(version, "v"))
		}
		return []variant{{path("", "x86_64"), "amd64", std[:1]}, {path("", "arm64"), "arm64", std[:1]},
			{path("-nvidia", "x86_64"), "amd64", gpu}}, nil
	}
	return nil, fmt.Errorf("resolving images: unknown AMI family %q", family)
}

func (p *Provider) alias(ctx context.Context, alias string) ([]v1alpha1.AMI, error) {
	family, version, _ := strings.Cut(alias, "@")
	vs, err := p.variants(family, version)
	if err != nil {
		return nil, err
	}
	var out []v1alpha1.AMI
	for _, v := range vs {
		res, err := p.ssm.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(v.param)})
		if awserrors.IsNotFound(err) {
			continue // not every variant exists for every version
		}
		if err != nil {
			return nil, fmt.Errorf("getting parameter %s: %w", v.param, err)
		}
		reqs := append([]v1alpha1.NodeSelectorRequirementWithMinValues{archReq(v.arch)}, v.reqs...)
		out = append(out, v1alpha1.AMI{ID: aws.ToString(res.Parameter.Value), Name: v.param, Requirements: reqs})
	}
	return out, nil
}

func archReq(arch string) v1alpha1.NodeSelectorRequirementWithMinValues {
	return v1alpha1.NodeSelectorRequirementWithMinValues{Key: corev1.LabelArchStable, Operator: v1alpha1.OperatorIn, Values: []string{arch}}
}

// selected resolves a tags/name/id term to the newest image per architecture.
func (p *Provider) selected(ctx context.Context, t v1alpha1.AMISelectorTerm) ([]v1alpha1.AMI, error) {
	in := &ec2.DescribeImagesInput{Filters: subnet.TagFilters(t.Tags)}
	if t.ID != "" {
		in.ImageIds = []string{t.ID}
	}
	if t.Name != "" {
		in.Filters = append(in.Filters, ec2types.Filter{Name: aws.String("name"), Values: []string{t.Name}})
	}
	if t.Owner != "" {
		in.Owners = []string{t.Owner}
	}
	newest := map[string]ec2types.Image{}
	pager := ec2.NewDescribeImagesPaginator(p.ec2, in)
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describing images: %w", err)
		}
		for _, img := range page.Images {
			arch := string(img.Architecture)
			if cur, ok := newest[arch]; !ok || aws.ToString(img.CreationDate) > aws.ToString(cur.CreationDate) {
				newest[arch] = img
			}
		}
	}
	out := make([]v1alpha1.AMI, 0, len(newest))
	for arch, img := range newest {
		k8sArch := map[string]string{"x86_64": "amd64", "arm64": "arm64"}[arch]
		out = append(out, v1alpha1.AMI{ID: aws.ToString(img.ImageId), Name: aws.ToString(img.Name),
			Requirements: []v1alpha1.NodeSelectorRequirementWithMinValues{archReq(k8sArch)}})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}
