package awsemu_test

import (
	"context"
	"strings"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

// TestAUserMayDoWhatItsPoliciesAllowAndNothingElse creates an IAM user as
// the seeded administrator, gives it a key, an inline policy and a managed
// one, and acts as it: its signature is verified, its policies evaluated,
// and a key IAM never issued is refused.
func TestAUserMayDoWhatItsPoliciesAllowAndNothingElse(t *testing.T) {
	e := awsemu.New(awsemu.DefaultConfig())
	admin := client(t, e)
	c := iam.NewFromConfig(admin)
	ctx := context.Background()
	who, err := sts.NewFromConfig(admin).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil || awssdk.ToString(who.Arn) != "arn:aws:iam::123456789012:user/"+awsemu.Administrator {
		t.Fatalf("the seeded administrator: %v %v", who, err)
	}
	user := awssdk.String("pipeline")
	if _, err := c.CreateUser(ctx, &iam.CreateUserInput{UserName: user}); err != nil {
		t.Fatal(err)
	}
	key, err := c.CreateAccessKey(ctx, &iam.CreateAccessKeyInput{UserName: user})
	if err != nil {
		t.Fatal(err)
	}
	describeOnly := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:DescribeInstances","Resource":"*"}]}`
	if _, err := c.PutUserPolicy(ctx, &iam.PutUserPolicyInput{UserName: user, PolicyName: awssdk.String("describe"),
		PolicyDocument: awssdk.String(describeOnly)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AttachUserPolicy(ctx, &iam.AttachUserPolicyInput{UserName: user,
		PolicyArn: awssdk.String("arn:aws:iam::aws:policy/AmazonSSMReadOnlyAccess")}); err != nil {
		t.Fatalf("attaching an AWS managed policy: %v", err)
	}
	as := func(id, secret string) awssdk.Config {
		cfg := admin.Copy()
		cfg.Credentials = credentials.NewStaticCredentialsProvider(id, secret, "")
		return cfg
	}
	pipeline := as(awssdk.ToString(key.AccessKey.AccessKeyId), awssdk.ToString(key.AccessKey.SecretAccessKey))
	if _, err := ec2.NewFromConfig(pipeline).DescribeInstances(ctx, &ec2.DescribeInstancesInput{}); err != nil {
		t.Errorf("an action its inline policy allows: %v", err)
	}
	_, err = ec2.NewFromConfig(pipeline).TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{"i-0123456789abcdef0"}})
	if code(err) != "UnauthorizedOperation" || !strings.Contains(err.Error(), "user/pipeline is not authorized to perform: ec2:TerminateInstances") {
		t.Errorf("an action no policy of its allows: %v, want UnauthorizedOperation naming the user", err)
	}
	if _, err := iam.NewFromConfig(pipeline).CreateUser(ctx, &iam.CreateUserInput{UserName: awssdk.String("escalate")}); code(err) != "AccessDenied" {
		t.Errorf("creating a user as the pipeline: %v, want AccessDenied", err)
	}
	for _, tc := range []struct{ name, id, secret, want string }{
		{"a wrong secret", awssdk.ToString(key.AccessKey.AccessKeyId), "guess", "SignatureDoesNotMatch"},
		{"a key IAM never issued", "AKIAUNKNOWN0000000000", "secret", "AuthFailure"},
	} {
		if _, err := ec2.NewFromConfig(as(tc.id, tc.secret)).DescribeInstances(ctx, &ec2.DescribeInstancesInput{}); code(err) != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.want)
		}
	}
	if _, err := c.DeleteUser(ctx, &iam.DeleteUserInput{UserName: user}); code(err) != "DeleteConflict" {
		t.Errorf("deleting a user with keys and policies: %v, want DeleteConflict", err)
	}
}
