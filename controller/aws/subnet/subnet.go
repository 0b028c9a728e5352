// Package subnet resolves a NodeClass's subnet selector terms to subnets.
package subnet

import (
	"context"
	"fmt"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/sdk"
)

// Subnet is a resolved subnet with its free addresses.
type Subnet struct {
	ID           string
	Zone         string
	ZoneID       string
	AvailableIPs int32
}

// Provider resolves subnet selector terms.
type Provider struct{ ec2 sdk.EC2API }

// NewProvider returns a subnet provider.
func NewProvider(ec2API sdk.EC2API) *Provider { return &Provider{ec2: ec2API} }

// Resolve returns the subnets any term selects, sorted by zone, then most free
// addresses first. Terms are ORed; within a term, tags are ANDed.
func (p *Provider) Resolve(ctx context.Context, terms []v1alpha1.SelectorTerm) ([]Subnet, error) {
	seen := map[string]Subnet{}
	for _, t := range terms {
		in := &ec2.DescribeSubnetsInput{Filters: TagFilters(t.Tags)}
		if t.ID != "" {
			in.SubnetIds = []string{t.ID}
		}
		pager := ec2.NewDescribeSubnetsPaginator(p.ec2, in)
		for pager.HasMorePages() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("describing subnets: %w", err)
			}
			for _, s := range page.Subnets {
				seen[aws.ToString(s.SubnetId)] = Subnet{aws.ToString(s.SubnetId), aws.ToString(s.AvailabilityZone),
					aws.ToString(s.AvailabilityZoneId), aws.ToInt32(s.AvailableIpAddressCount)}
			}
		}
	}
	out := make([]Subnet, 0, len(seen))
	for _, s := range seen {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Zone != out[j].Zone {
			return out[i].Zone < out[j].Zone
		}
		if out[i].AvailableIPs != out[j].AvailableIPs {
			return out[i].AvailableIPs > out[j].AvailableIPs
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// TagFilters turns a tag selector into EC2 filters; "*" selects any value.
func TagFilters(tags map[string]string) []ec2types.Filter {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]ec2types.Filter, 0, len(keys))
	for _, k := range keys {
		if tags[k] == "*" {
			out = append(out, ec2types.Filter{Name: aws.String("tag-key"), Values: []string{k}})
			continue
		}
		out = append(out, ec2types.Filter{Name: aws.String("tag:" + k), Values: []string{tags[k]}})
	}
	return out
}

// PerZone keeps the subnet with the most free addresses in each zone; subnets
// with none left are skipped.
func PerZone(subnets []Subnet) map[string]Subnet {
	out := map[string]Subnet{}
	for _, s := range subnets {
		if cur, ok := out[s.Zone]; s.AvailableIPs > 0 && (!ok || s.AvailableIPs > cur.AvailableIPs) {
			out[s.Zone] = s
		}
	}
	return out
}
