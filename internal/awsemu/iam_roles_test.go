package awsemu_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

const nodeTrust = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`

func TestRolesPoliciesAndInstanceProfilesThroughTheSDK(t *testing.T) {
	e := awsemu.New(awsemu.DefaultConfig())
	c := iam.NewFromConfig(client(t, e))
	ctx := context.Background()
	role := awssdk.String("StowageNodeRole-prod")
	_, err := c.CreateRole(ctx, &iam.CreateRoleInput{RoleName: role, AssumeRolePolicyDocument: awssdk.String(nodeTrust),
		Description: awssdk.String("nodes"), Tags: []iamtypes.Tag{{Key: awssdk.String("team"), Value: awssdk.String("platform")}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateRole(ctx, &iam.CreateRoleInput{RoleName: role, AssumeRolePolicyDocument: awssdk.String(nodeTrust)}); code(err) != "EntityAlreadyExists" {
		t.Errorf("creating it again: %v, want EntityAlreadyExists", err)
	}
	got, err := c.GetRole(ctx, &iam.GetRoleInput{RoleName: role})
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := url.QueryUnescape(awssdk.ToString(got.Role.AssumeRolePolicyDocument))
	if doc != nodeTrust || awssdk.ToString(got.Role.Arn) != "arn:aws:iam::123456789012:role/StowageNodeRole-prod" || len(got.Role.Tags) != 1 {
		t.Errorf("role %s, trust %s, tags %v", awssdk.ToString(got.Role.Arn), doc, got.Role.Tags)
	}
	for _, arn := range []string{"arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy", "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
		"arn:aws:iam::aws:policy/AmazonEKSWorkerNodeMinimalPolicy", "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly"} {
		if _, err := c.AttachRolePolicy(ctx, &iam.AttachRolePolicyInput{RoleName: role, PolicyArn: awssdk.String(arn)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.AttachRolePolicy(ctx, &iam.AttachRolePolicyInput{RoleName: role, PolicyArn: awssdk.String("arn:aws:iam::aws:policy/NoSuchPolicy")}); code(err) != "NoSuchEntity" {
		t.Errorf("attaching a policy that does not exist: %v, want NoSuchEntity", err)
	}
	attached, err := c.ListAttachedRolePolicies(ctx, &iam.ListAttachedRolePoliciesInput{RoleName: role})
	if err != nil || len(attached.AttachedPolicies) != 4 || awssdk.ToString(attached.AttachedPolicies[1].PolicyName) != "AmazonEKS_CNI_Policy" {
		t.Errorf("attached %v, %v", attached, err)
	}
	inline := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}]}`
	if _, err := c.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: role, PolicyName: awssdk.String("read"), PolicyDocument: awssdk.String(inline)}); err != nil {
		t.Fatal(err)
	}
	rp, err := c.GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: role, PolicyName: awssdk.String("read")})
	if back, _ := url.QueryUnescape(awssdk.ToString(rp.PolicyDocument)); err != nil || back != inline {
		t.Errorf("inline policy read back as %q, %v", back, err)
	}
	bad := []struct{ name, doc, code string }{
		{"malformed", `{"Statement":[{"Effect":"Allow","Action":"s3:*"}]}`, "MalformedPolicyDocument"},
		{"too large", `{"Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":["` + strings.Repeat("arn:aws:s3:::a-bucket/key", 420) + `"]}]}`, "LimitExceeded"},
	}
	for _, b := range bad {
		_, err := c.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: role, PolicyName: awssdk.String("x"), PolicyDocument: awssdk.String(b.doc)})
		if code(err) != b.code {
			t.Errorf("%s policy: %v, want %s", b.name, err, b.code)
		}
	}
	profile := awssdk.String("StowageNodeRole-prod")
	if _, err := c.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: profile}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{InstanceProfileName: profile, RoleName: role}); err != nil {
		t.Fatal(err)
	}
	// A role still in use cannot go: policies, then the profile, first.
	if _, err := c.DeleteRole(ctx, &iam.DeleteRoleInput{RoleName: role}); code(err) != "DeleteConflict" {
		t.Errorf("deleting a role with policies: %v, want DeleteConflict", err)
	}
	c.DeleteRolePolicy(ctx, &iam.DeleteRolePolicyInput{RoleName: role, PolicyName: awssdk.String("read")})
	for _, a := range attached.AttachedPolicies {
		c.DetachRolePolicy(ctx, &iam.DetachRolePolicyInput{RoleName: role, PolicyArn: a.PolicyArn})
	}
	if _, err := c.DeleteRole(ctx, &iam.DeleteRoleInput{RoleName: role}); code(err) != "DeleteConflict" {
		t.Errorf("deleting a role in an instance profile: %v, want DeleteConflict", err)
	}
	if _, err := c.DeleteInstanceProfile(ctx, &iam.DeleteInstanceProfileInput{InstanceProfileName: profile}); code(err) != "DeleteConflict" {
		t.Errorf("deleting a profile that holds a role: %v, want DeleteConflict", err)
	}
	for _, step := range []func() error{
		func() error {
			_, err := c.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{InstanceProfileName: profile, RoleName: role})
			return err
		},
		func() error {
			_, err := c.DeleteInstanceProfile(ctx, &iam.DeleteInstanceProfileInput{InstanceProfileName: profile})
			return err
		},
		func() error { _, err := c.DeleteRole(ctx, &iam.DeleteRoleInput{RoleName: role}); return err },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	if len(e.Roles()) != 0 {
		t.Errorf("roles left: %v", e.Roles())
	}
}
