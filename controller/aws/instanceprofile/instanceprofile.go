// Package instanceprofile finds or creates the IAM instance profile nodes run with.
package instanceprofile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/stowage-dev/stowage/controller/aws/awserrors"
	"github.com/stowage-dev/stowage/controller/aws/sdk"
)

// Provider manages instance profiles for node roles.
type Provider struct {
	iam     sdk.IAMAPI
	cluster string
}

// NewProvider returns a provider that names profiles after the cluster.
func NewProvider(iamAPI sdk.IAMAPI, cluster string) *Provider {
	return &Provider{iam: iamAPI, cluster: cluster}
}

// Name is the profile Stowage manages for a role: stable, unique per cluster and role.
func (p *Provider) Name(role string) string {
	sum := sha256.Sum256([]byte(p.cluster + "/" + role))
	return "stowage_" + hex.EncodeToString(sum[:8])
}

// Existing checks that a user-supplied profile exists and returns its name.
func (p *Provider) Existing(ctx context.Context, name string) (string, error) {
	if _, err := p.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)}); err != nil {
		return "", fmt.Errorf("getting instance profile %s: %w", name, err)
	}
	return name, nil
}

// ForRole returns the managed profile for role, creating it and adding the
// role when missing; with a read-only client (a dry run) it names the
// profile it would create.
func (p *Provider) ForRole(ctx context.Context, role string) (string, error) {
	name := p.Name(role)
	out, err := p.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
	switch {
	case err == nil:
		if len(out.InstanceProfile.Roles) > 0 {
			return name, nil
		}
	case awserrors.IsNotFound(err):
		if _, err := p.iam.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{
			InstanceProfileName: aws.String(name),
			Tags: []iamtypes.Tag{{Key: aws.String("kubernetes.io/cluster/" + p.cluster), Value: aws.String("owned")},
				{Key: aws.String("stowage.dev/role"), Value: aws.String(role)}},
		}); errors.Is(err, sdk.ErrDryRun) {
			return name, nil
		} else if err != nil && awserrors.Code(err) != "EntityAlreadyExists" {
			return "", fmt.Errorf("creating instance profile %s: %w", name, err)
		}
	default:
		return "", fmt.Errorf("getting instance profile %s: %w", name, err)
	}
	if _, err := p.iam.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{
		InstanceProfileName: aws.String(name), RoleName: aws.String(role),
	}); errors.Is(err, sdk.ErrDryRun) {
		return name, nil
	} else if err != nil && awserrors.Code(err) != "LimitExceeded" {
		return "", fmt.Errorf("adding role %s to instance profile %s: %w", role, name, err)
	}
	return name, nil
}
