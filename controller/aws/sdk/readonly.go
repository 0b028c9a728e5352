package sdk

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
)

// ErrDryRun is what a read-only client returns instead of making a call
// that would change something in the account (stowage run --dry-run).
var ErrDryRun = errors.New("dry run: Stowage makes no call that changes the account")

// ReadOnlyEC2 passes EC2's read calls through and refuses the ones that
// create, change or delete (launch templates, fleets, instances) with
// ErrDryRun, without calling AWS.
type ReadOnlyEC2 struct{ EC2API }

var _ EC2API = ReadOnlyEC2{}

// CreateLaunchTemplate is refused.
func (ReadOnlyEC2) CreateLaunchTemplate(context.Context, *ec2.CreateLaunchTemplateInput, ...func(*ec2.Options)) (*ec2.CreateLaunchTemplateOutput, error) {
	return nil, ErrDryRun
}

// DeleteLaunchTemplate is refused.
func (ReadOnlyEC2) DeleteLaunchTemplate(context.Context, *ec2.DeleteLaunchTemplateInput, ...func(*ec2.Options)) (*ec2.DeleteLaunchTemplateOutput, error) {
	return nil, ErrDryRun
}

// CreateFleet is refused.
func (ReadOnlyEC2) CreateFleet(context.Context, *ec2.CreateFleetInput, ...func(*ec2.Options)) (*ec2.CreateFleetOutput, error) {
	return nil, ErrDryRun
}

// TerminateInstances is refused.
func (ReadOnlyEC2) TerminateInstances(context.Context, *ec2.TerminateInstancesInput, ...func(*ec2.Options)) (*ec2.TerminateInstancesOutput, error) {
	return nil, ErrDryRun
}

// ReadOnlyIAM reads instance profiles and refuses to create or change them
// with ErrDryRun.
type ReadOnlyIAM struct{ IAMAPI }

var _ IAMAPI = ReadOnlyIAM{}

// CreateInstanceProfile is refused.
func (ReadOnlyIAM) CreateInstanceProfile(context.Context, *iam.CreateInstanceProfileInput, ...func(*iam.Options)) (*iam.CreateInstanceProfileOutput, error) {
	return nil, ErrDryRun
}

// AddRoleToInstanceProfile is refused.
func (ReadOnlyIAM) AddRoleToInstanceProfile(context.Context, *iam.AddRoleToInstanceProfileInput, ...func(*iam.Options)) (*iam.AddRoleToInstanceProfileOutput, error) {
	return nil, ErrDryRun
}
