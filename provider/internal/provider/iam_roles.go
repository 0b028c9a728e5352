package provider

import (
	"context"
	"fmt"
	"net/url"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
)

func iamTags(tags map[string]string) []iamtypes.Tag {
	out := make([]iamtypes.Tag, 0, len(tags))
	for _, k := range sortedKeys(tags) {
		out = append(out, iamtypes.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	return out
}

func attachedPolicies(ctx context.Context, c *iam.Client, role string) ([]string, error) {
	var out []string
	p := iam.NewListAttachedRolePoliciesPaginator(c, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String(role)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, a := range page.AttachedPolicies {
			out = append(out, aws.ToString(a.PolicyArn))
		}
	}
	slices.Sort(out)
	return out, nil
}

// retagRole makes a role's tags want.
func retagRole(ctx context.Context, c *iam.Client, role string, have, want map[string]string) error {
	var gone []string
	for k := range have {
		if _, ok := want[k]; !ok {
			gone = append(gone, k)
		}
	}
	if len(gone) > 0 {
		if _, err := c.UntagRole(ctx, &iam.UntagRoleInput{RoleName: aws.String(role), TagKeys: gone}); err != nil {
			return err
		}
	}
	if len(want) > 0 {
		_, err := c.TagRole(ctx, &iam.TagRoleInput{RoleName: aws.String(role), Tags: iamTags(want)})
		return err
	}
	return nil
}

// deleteRole detaches and deletes every policy of a role, then the role; a
// role already gone is not an error.
func deleteRole(ctx context.Context, c *iam.Client, role string) error {
	attached, err := attachedPolicies(ctx, c, role)
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, a := range attached {
		if _, err := c.DetachRolePolicy(ctx, &iam.DetachRolePolicyInput{RoleName: aws.String(role), PolicyArn: aws.String(a)}); err != nil && !isNotFound(err) {
			return fmt.Errorf("detaching %s: %w", a, err)
		}
	}
	inline, err := c.ListRolePolicies(ctx, &iam.ListRolePoliciesInput{RoleName: aws.String(role)})
	if err != nil {
		return err
	}
	for _, p := range inline.PolicyNames {
		if _, err := c.DeleteRolePolicy(ctx, &iam.DeleteRolePolicyInput{RoleName: aws.String(role), PolicyName: aws.String(p)}); err != nil && !isNotFound(err) {
			return fmt.Errorf("deleting inline policy %s: %w", p, err)
		}
	}
	if _, err := c.DeleteRole(ctx, &iam.DeleteRoleInput{RoleName: aws.String(role)}); err != nil && !isNotFound(err) {
		return err
	}
	return nil
}

// decodePolicy reads a policy document as IAM returns it, URL-encoded.
func decodePolicy(doc *string) string {
	s, err := url.QueryUnescape(aws.ToString(doc))
	if err != nil {
		return aws.ToString(doc)
	}
	return s
}
