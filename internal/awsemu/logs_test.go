package awsemu_test

import (
	"context"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	logstypes "github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

func TestLogGroupsAndRetentionThroughTheSDK(t *testing.T) {
	e := awsemu.New(awsemu.DefaultConfig())
	c := cloudwatchlogs.NewFromConfig(client(t, e))
	ctx := context.Background()
	name := awssdk.String("/aws/lambda/stowage-interruption")
	if _, err := c.CreateLogGroup(ctx, &cloudwatchlogs.CreateLogGroupInput{LogGroupName: name, Tags: map[string]string{"team": "platform"}}); err != nil {
		t.Fatal(err)
	}
	_, err := c.CreateLogGroup(ctx, &cloudwatchlogs.CreateLogGroupInput{LogGroupName: name})
	var exists *logstypes.ResourceAlreadyExistsException
	if !errorsAs(err, &exists) {
		t.Errorf("creating it again: %v, want ResourceAlreadyExistsException", err)
	}
	if _, err := c.PutRetentionPolicy(ctx, &cloudwatchlogs.PutRetentionPolicyInput{LogGroupName: name, RetentionInDays: awssdk.Int32(13)}); code(err) != "InvalidParameterException" {
		t.Errorf("13 days: %v, want InvalidParameterException (not a retention CloudWatch offers)", err)
	}
	if _, err := c.PutRetentionPolicy(ctx, &cloudwatchlogs.PutRetentionPolicyInput{LogGroupName: name, RetentionInDays: awssdk.Int32(14)}); err != nil {
		t.Fatal(err)
	}
	out, err := c.DescribeLogGroups(ctx, &cloudwatchlogs.DescribeLogGroupsInput{LogGroupNamePrefix: awssdk.String("/aws/lambda/")})
	if err != nil || len(out.LogGroups) != 1 {
		t.Fatalf("log groups %v, %v", out, err)
	}
	g := out.LogGroups[0]
	if awssdk.ToInt32(g.RetentionInDays) != 14 || awssdk.ToString(g.LogGroupArn) != "arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/stowage-interruption" {
		t.Errorf("log group %s retention %d", awssdk.ToString(g.LogGroupArn), awssdk.ToInt32(g.RetentionInDays))
	}
	tags, err := c.ListTagsForResource(ctx, &cloudwatchlogs.ListTagsForResourceInput{ResourceArn: g.LogGroupArn})
	if err != nil || tags.Tags["team"] != "platform" {
		t.Errorf("tags %v, %v", tags, err)
	}
	if _, err := c.DeleteLogGroup(ctx, &cloudwatchlogs.DeleteLogGroupInput{LogGroupName: name}); err != nil {
		t.Fatal(err)
	}
	_, err = c.DeleteLogGroup(ctx, &cloudwatchlogs.DeleteLogGroupInput{LogGroupName: name})
	var missing *logstypes.ResourceNotFoundException
	if !errorsAs(err, &missing) || len(e.LogGroups()) != 0 {
		t.Errorf("deleting it again: %v (groups left %v), want ResourceNotFoundException", err, e.LogGroups())
	}
}
