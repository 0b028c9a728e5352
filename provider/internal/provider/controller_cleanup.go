package provider

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/stowage-dev/stowage/controller/aws/instance"
	"github.com/stowage-dev/stowage/controller/aws/launchtemplate"
)

// cleanupAWS deletes what the controller made in AWS for the cluster and
// leaves behind once its instances are gone: its launch templates (tagged
// stowage.dev/cluster) and the instance profiles it made for node roles
// (tagged kubernetes.io/cluster/<name>=owned), which it keeps for reuse.
func cleanupAWS(ctx context.Context, cfg aws.Config, cluster string) error {
	e := ec2.NewFromConfig(cfg)
	pager := ec2.NewDescribeLaunchTemplatesPaginator(e, &ec2.DescribeLaunchTemplatesInput{
		Filters: []ec2types.Filter{{Name: aws.String("tag:" + launchtemplate.TagCluster), Values: []string{cluster}}}})
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("listing the cluster's launch templates: %w", err)
		}
		for _, lt := range page.LaunchTemplates {
			if _, err := e.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateId: lt.LaunchTemplateId}); err != nil && !isNotFound(err) {
				return fmt.Errorf("deleting launch template %s: %w", aws.ToString(lt.LaunchTemplateName), err)
			}
		}
	}
	return deleteClusterProfiles(ctx, iam.NewFromConfig(cfg), cluster)
}

func deleteClusterProfiles(ctx context.Context, c *iam.Client, cluster string) error {
	pager := iam.NewListInstanceProfilesPaginator(c, &iam.ListInstanceProfilesInput{})
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("listing instance profiles: %w", err)
		}
		for _, p := range page.InstanceProfiles {
			tags, err := c.ListInstanceProfileTags(ctx, &iam.ListInstanceProfileTagsInput{InstanceProfileName: p.InstanceProfileName})
			if err != nil {
				return fmt.Errorf("reading the tags of instance profile %s: %w", aws.ToString(p.InstanceProfileName), err)
			}
			owned := false
			for _, t := range tags.Tags {
				owned = owned || aws.ToString(t.Key) == instance.ClusterTag(cluster) && aws.ToString(t.Value) == "owned"
			}
			if !owned {
				continue
			}
			for _, r := range p.Roles {
				if _, err := c.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{InstanceProfileName: p.InstanceProfileName,
					RoleName: r.RoleName}); err != nil && !isNotFound(err) {
					return fmt.Errorf("emptying instance profile %s: %w", aws.ToString(p.InstanceProfileName), err)
				}
			}
			if _, err := c.DeleteInstanceProfile(ctx, &iam.DeleteInstanceProfileInput{InstanceProfileName: p.InstanceProfileName}); err != nil && !isNotFound(err) {
				return fmt.Errorf("deleting instance profile %s: %w", aws.ToString(p.InstanceProfileName), err)
			}
		}
	}
	return nil
}

// freeRole takes a role out of every instance profile that holds it, so that
// it can be deleted (the controller adds node roles to profiles of its own).
func freeRole(ctx context.Context, c *iam.Client, role string) error {
	out, err := c.ListInstanceProfilesForRole(ctx, &iam.ListInstanceProfilesForRoleInput{RoleName: aws.String(role)})
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, p := range out.InstanceProfiles {
		if _, err := c.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{InstanceProfileName: p.InstanceProfileName,
			RoleName: aws.String(role)}); err != nil && !isNotFound(err) {
			return fmt.Errorf("removing role %s from instance profile %s: %w", role, aws.ToString(p.InstanceProfileName), err)
		}
	}
	return nil
}
