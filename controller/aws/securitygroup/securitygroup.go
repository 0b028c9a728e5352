// Package securitygroup resolves a NodeClass's security group selector terms.
package securitygroup

import (
	"context"
	"fmt"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/sdk"
	"github.com/stowage-dev/stowage/controller/aws/subnet"
)

// Provider resolves security group selector terms.
type Provider struct{ ec2 sdk.EC2API }

// NewProvider returns a security group provider.
func NewProvider(ec2API sdk.EC2API) *Provider { return &Provider{ec2: ec2API} }

// Resolve returns the groups any term selects, sorted by id.
func (p *Provider) Resolve(ctx context.Context, terms []v1alpha1.SecurityGroupSelectorTerm) ([]v1alpha1.SecurityGroup, error) {
	seen := map[string]v1alpha1.SecurityGroup{}
	for _, t := range terms {
		in := &ec2.DescribeSecurityGroupsInput{Filters: subnet.TagFilters(t.Tags)}
		if t.ID != "" {
			in.GroupIds = []string{t.ID}
		}
		if t.Name != "" {
			in.Filters = append(in.Filters, ec2types.Filter{Name: aws.String("group-name"), Values: []string{t.Name}})
		}
		pager := ec2.NewDescribeSecurityGroupsPaginator(p.ec2, in)
		for pager.HasMorePages() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("describing security groups: %w", err)
			}
			for _, g := range page.SecurityGroups {
				seen[aws.ToString(g.GroupId)] = v1alpha1.SecurityGroup{ID: aws.ToString(g.GroupId), Name: aws.ToString(g.GroupName)}
			}
		}
	}
	out := make([]v1alpha1.SecurityGroup, 0, len(seen))
	for _, g := range seen {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}
