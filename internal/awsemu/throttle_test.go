package awsemu_test

import (
	"context"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/arczonalshift"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

// TestEveryServiceThrottlesAsTheSDKExpects throttles one call of each service
// the emulator serves and checks, by the SDK's own standard retryer, that
// the answer is a throttle: a blank or unknown code is an error the SDK
// gives straight back to the caller instead of retrying.
func TestEveryServiceThrottlesAsTheSDKExpects(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		action string
		call   func(awssdk.Config) error
	}{
		{"DescribeCluster", func(c awssdk.Config) error {
			_, err := eks.NewFromConfig(c).DescribeCluster(ctx, &eks.DescribeClusterInput{Name: awssdk.String("e2e")})
			return err
		}},
		{"ListZonalShifts", func(c awssdk.Config) error {
			_, err := arczonalshift.NewFromConfig(c).ListZonalShifts(ctx, &arczonalshift.ListZonalShiftsInput{})
			return err
		}},
		{"DescribeLogGroups", func(c awssdk.Config) error {
			_, err := cloudwatchlogs.NewFromConfig(c).DescribeLogGroups(ctx, &cloudwatchlogs.DescribeLogGroupsInput{})
			return err
		}},
		{"DescribeRule", func(c awssdk.Config) error {
			_, err := eventbridge.NewFromConfig(c).DescribeRule(ctx, &eventbridge.DescribeRuleInput{Name: awssdk.String("r")})
			return err
		}},
		{"GetRole", func(c awssdk.Config) error {
			_, err := iam.NewFromConfig(c).GetRole(ctx, &iam.GetRoleInput{RoleName: awssdk.String("r")})
			return err
		}},
		{"GetFunction", func(c awssdk.Config) error {
			_, err := lambda.NewFromConfig(c).GetFunction(ctx, &lambda.GetFunctionInput{FunctionName: awssdk.String("f")})
			return err
		}},
		{"GetProducts", func(c awssdk.Config) error {
			_, err := pricing.NewFromConfig(c).GetProducts(ctx, &pricing.GetProductsInput{ServiceCode: awssdk.String("AmazonEC2")})
			return err
		}},
		{"GetQueueUrl", func(c awssdk.Config) error {
			_, err := sqs.NewFromConfig(c).GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: awssdk.String("q")})
			return err
		}},
		{"GetParameter", func(c awssdk.Config) error {
			_, err := ssm.NewFromConfig(c).GetParameter(ctx, &ssm.GetParameterInput{Name: awssdk.String("/p")})
			return err
		}},
		{"GetCallerIdentity", func(c awssdk.Config) error {
			_, err := sts.NewFromConfig(c).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
			return err
		}},
	} {
		t.Run(tc.action, func(t *testing.T) {
			e := awsemu.New(awsemu.DefaultConfig())
			e.Inject(awsemu.Fault{Action: tc.action, Kind: awsemu.FaultThrottle, Times: 1})
			err := tc.call(client(t, e))
			if err == nil {
				t.Fatal("the throttled call succeeded")
			}
			if retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(err) != awssdk.TrueTernary {
				t.Errorf("the SDK does not take %v (code %q) for a throttle", err, code(err))
			}
			if n := e.FaultsInjected()[awsemu.FaultThrottle]; n != 1 {
				t.Errorf("FaultsInjected()[throttle] = %d, want 1", n)
			}
		})
	}
}
