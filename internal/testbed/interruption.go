package testbed

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/stowage-dev/stowage/controller/aws/iampolicy"
	lambdarbac "github.com/stowage-dev/stowage/controller/deploy/lambda"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/lambda/config"
	"github.com/stowage-dev/stowage/lambda/messages/registry"
)

// Names of the interruption path the bed deploys.
const (
	LambdaRole        = "stowage-interruption-lambda"
	LambdaFunction    = "stowage-interruption"
	InterruptionQueue = "stowage-interruptions"
	// LambdaUser is the Kubernetes user the Lambda's role maps to.
	LambdaUser = "stowage-interruption-lambda:{{SessionName}}"
)

// LambdaOptions vary the interruption path StartLambda deploys.
type LambdaOptions struct {
	// Zip is the function's deployment package (BuildLambdaZip).
	Zip string
	// Rebalance is the function's REBALANCE_RECOMMENDATION (ignore when empty).
	Rebalance string
	// Disabled creates the event source mapping disabled; EnableMapping starts it.
	Disabled bool
	// VisibilityTimeout is the queue's, in seconds (30 when zero).
	VisibilityTimeout int
	// BatchWindow is the mapping's MaximumBatchingWindowInSeconds.
	BatchWindow int
}

// Lambda is the interruption path on the bed: EventBridge rules feeding an
// SQS queue, mapped to the interruption Lambda, whose bootstrap runs under
// RIE and reaches the API server with an EKS token for its role only.
type Lambda struct {
	QueueURL, QueueARN, MappingUUID, RoleARN string
	// Runtime runs the function; its Logs are the function's.
	Runtime *RIERuntime
	// AWS is an SDK configuration for the emulator.
	AWS aws.Config
}

// StartLambda deploys the interruption path: the Lambda's RBAC
// (controller/deploy/lambda), its IAM role mapped to the RBAC's group by the
// token webhook, the queue with one EventBridge rule per event source the
// Lambda reads, the function from the zip, and the event source mapping
// (batches of ten, ReportBatchItemFailures).
func (b *Bed) StartLambda(ctx context.Context, o LambdaOptions) (*Lambda, error) {
	if err := b.installLambdaRBAC(ctx); err != nil {
		return nil, err
	}
	l := &Lambda{RoleARN: "arn:aws:iam::" + awsemu.DefaultConfig().AccountID + ":role/" + LambdaRole,
		AWS: aws.Config{Region: Region, BaseEndpoint: aws.String(b.EmulatorURL), RetryMaxAttempts: 3,
			Credentials: credentials.NewStaticCredentialsProvider(awsemu.DefaultAccessKeyID, awsemu.DefaultSecretAccessKey, "")}}
	b.TokenWebhook.MapRole(l.RoleARN, RoleMapping{Username: LambdaUser, Groups: []string{lambdarbac.Group}})
	dir, err := os.MkdirTemp("", "stowage-lambda-")
	if err != nil {
		return nil, err
	}
	// The functions stop before their folders go.
	b.stops = append(b.stops, func() error { return errors.Join(b.Emulator.Shutdown(), os.RemoveAll(dir)) })
	l.Runtime = &RIERuntime{Dir: dir, EndpointURL: b.EmulatorURL}
	b.Emulator.SetFunctionRuntime(l.Runtime)
	if err := l.createQueue(ctx, o); err != nil {
		return nil, err
	}
	if err := l.createRole(ctx); err != nil {
		return nil, err
	}
	if err := l.createRules(ctx); err != nil {
		return nil, err
	}
	if err := l.createFunction(ctx, b, o); err != nil {
		return nil, err
	}
	return l, l.mapQueue(ctx, o)
}

func (b *Bed) installLambdaRBAC(ctx context.Context) error {
	objs, err := lambdarbac.Manifests()
	if err != nil {
		return err
	}
	for _, o := range objs {
		if err := b.Admin.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
		}
	}
	return nil
}

func (l *Lambda) createQueue(ctx context.Context, o LambdaOptions) error {
	q := sqs.NewFromConfig(l.AWS)
	visibility := o.VisibilityTimeout
	if visibility == 0 {
		visibility = 30
	}
	// EventBridge may send only to a queue whose policy lets it: the bed's rules may.
	policy := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"events.amazonaws.com"},"Action":"sqs:SendMessage",` +
		`"Resource":"*","Condition":{"ArnLike":{"aws:SourceArn":"arn:aws:events:*:*:rule/stowage-interruption-*"}}}]}`
	out, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(InterruptionQueue),
		Attributes: map[string]string{"VisibilityTimeout": strconv.Itoa(visibility), "Policy": policy}})
	if err != nil {
		return fmt.Errorf("creating the interruption queue: %w", err)
	}
	l.QueueURL = aws.ToString(out.QueueUrl)
	attrs, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return fmt.Errorf("reading the interruption queue's ARN: %w", err)
	}
	l.QueueARN = attrs.Attributes["QueueArn"]
	return nil
}

// createRole makes the Lambda's execution role with the policy Stowage
// generates for it: its queue and its log group, nothing else (Lambda checks
// it before it maps the queue).
func (l *Lambda) createRole(ctx context.Context) error {
	doc, err := iampolicy.Lambda(iampolicy.LambdaConfig{Region: Region, AccountID: awsemu.DefaultConfig().AccountID,
		QueueARN: l.QueueARN, LogGroup: "/aws/lambda/" + LambdaFunction})
	if err != nil {
		return err
	}
	c := iam.NewFromConfig(l.AWS)
	trust := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}`
	if _, err := c.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String(LambdaRole), AssumeRolePolicyDocument: aws.String(trust)}); err != nil {
		return fmt.Errorf("creating the Lambda's role: %w", err)
	}
	if _, err := c.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: aws.String(LambdaRole), PolicyName: aws.String("interruption"),
		PolicyDocument: aws.String(doc.JSON())}); err != nil {
		return fmt.Errorf("putting the Lambda's policy: %w", err)
	}
	return nil
}

// createRules sends every event the Lambda reads to the queue: one rule per
// source, listing its detail types.
func (l *Lambda) createRules(ctx context.Context) error {
	bySource := map[string][]string{}
	for _, k := range registry.New().Keys() {
		bySource[k.Source] = append(bySource[k.Source], k.DetailType)
	}
	eb := eventbridge.NewFromConfig(l.AWS)
	for source, types := range bySource {
		name := "stowage-interruption-" + source
		pattern := fmt.Sprintf(`{"source":[%q],"detail-type":%s}`, source, jsonList(types))
		if _, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String(name), EventPattern: aws.String(pattern)}); err != nil {
			return fmt.Errorf("creating rule %s: %w", name, err)
		}
		if _, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String(name),
			Targets: []ebtypes.Target{{Id: aws.String("queue"), Arn: aws.String(l.QueueARN)}}}); err != nil {
			return fmt.Errorf("targeting rule %s at the queue: %w", name, err)
		}
	}
	return nil
}

func jsonList(items []string) string {
	out := "["
	for i, s := range items {
		if i > 0 {
			out += ","
		}
		out += strconv.Quote(s)
	}
	return out + "]"
}

// createFunction creates the function, configured for the bed's cluster as
// for an EKS one: name, endpoint and CA, no kubeconfig.
func (l *Lambda) createFunction(ctx context.Context, b *Bed, o LambdaOptions) error {
	code, err := os.ReadFile(o.Zip)
	if err != nil {
		return fmt.Errorf("reading the Lambda's zip: %w (build it with %s)", err, LambdaTarget)
	}
	env := map[string]string{
		config.EnvClusterName: b.Cluster, config.EnvClusterEndpoint: b.ControlPlane.APIServerURL,
		config.EnvClusterCA: base64.StdEncoding.EncodeToString(b.ControlPlane.Config.CAData),
		config.EnvRebalance: o.Rebalance, config.EnvLogLevel: "info",
	}
	_, err = lambda.NewFromConfig(l.AWS).CreateFunction(ctx, &lambda.CreateFunctionInput{
		FunctionName: aws.String(LambdaFunction), Role: aws.String(l.RoleARN), Runtime: lambdatypes.RuntimeProvidedal2023,
		Handler: aws.String("bootstrap"), Code: &lambdatypes.FunctionCode{ZipFile: code}, Timeout: aws.Int32(30), MemorySize: aws.Int32(128),
		Architectures: []lambdatypes.Architecture{goArchToLambda()}, Environment: &lambdatypes.Environment{Variables: env},
	})
	if err != nil {
		return fmt.Errorf("creating the interruption function: %w", err)
	}
	return nil
}

func (l *Lambda) mapQueue(ctx context.Context, o LambdaOptions) error {
	out, err := lambda.NewFromConfig(l.AWS).CreateEventSourceMapping(ctx, &lambda.CreateEventSourceMappingInput{
		EventSourceArn: aws.String(l.QueueARN), FunctionName: aws.String(LambdaFunction), BatchSize: aws.Int32(10),
		MaximumBatchingWindowInSeconds: aws.Int32(int32(o.BatchWindow)), Enabled: aws.Bool(!o.Disabled), //nolint:gosec // seconds
		FunctionResponseTypes: []lambdatypes.FunctionResponseType{lambdatypes.FunctionResponseTypeReportBatchItemFailures},
	})
	if err != nil {
		return fmt.Errorf("mapping the queue to the function: %w", err)
	}
	l.MappingUUID = aws.ToString(out.UUID)
	return nil
}

// EnableMapping starts a mapping created disabled.
func (l *Lambda) EnableMapping(ctx context.Context) error {
	_, err := lambda.NewFromConfig(l.AWS).UpdateEventSourceMapping(ctx, &lambda.UpdateEventSourceMappingInput{
		UUID: aws.String(l.MappingUUID), Enabled: aws.Bool(true)})
	return err
}

func goArchToLambda() lambdatypes.Architecture {
	for lambdaArch, goArch := range arches {
		if goArch == runtime.GOARCH {
			return lambdatypes.Architecture(lambdaArch)
		}
	}
	return lambdatypes.ArchitectureX8664
}

// DisableMapping stops the mapping's poller; records wait on the queue.
func (l *Lambda) DisableMapping(ctx context.Context) error {
	_, err := lambda.NewFromConfig(l.AWS).UpdateEventSourceMapping(ctx, &lambda.UpdateEventSourceMappingInput{
		UUID: aws.String(l.MappingUUID), Enabled: aws.Bool(false)})
	return err
}
