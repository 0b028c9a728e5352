package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	lambdarbac "github.com/stowage-dev/stowage/controller/deploy/lambda"
	"github.com/stowage-dev/stowage/provider/internal/kube"
	"github.com/stowage-dev/stowage/provider/internal/lambdazip"
)

// lambdaTrust lets Lambda assume the function's role.
const lambdaTrust = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}`

// roleVisibleTimeout bounds the wait for a new role to be assumable by Lambda
// (IAM is eventually consistent).
const roleVisibleTimeout = 2 * time.Minute

type handlerClients struct {
	iam    *iam.Client
	logs   *cloudwatchlogs.Client
	lambda *lambda.Client
	eks    *eks.Client
	kube   *kube.Client
}

func (r *handlerResource) clients(ctx context.Context, diags *diag.Diagnostics) (handlerClients, bool) {
	cfg, ok := r.aws(ctx, diags)
	if !ok {
		return handlerClients{}, false
	}
	kc, err := r.access.Client(ctx)
	if err != nil {
		diags.AddError("Reaching the cluster", err.Error()+"; the Lambda's ClusterRole is applied to the provider's cluster")
		return handlerClients{}, false
	}
	return handlerClients{iam: iam.NewFromConfig(cfg), logs: cloudwatchlogs.NewFromConfig(cfg), lambda: lambda.NewFromConfig(cfg),
		eks: eks.NewFromConfig(cfg), kube: kc}, true
}

func (r *handlerResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.write(ctx, req.Plan.Get, &resp.State, &resp.Diagnostics)
}

func (r *handlerResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.write(ctx, req.Plan.Get, &resp.State, &resp.Diagnostics)
}

// write makes AWS and the cluster hold the model, creating what is missing
// and updating what exists; what was made is recorded even on an error.
func (r *handlerResource) write(ctx context.Context, get func(context.Context, any) diag.Diagnostics, state interface {
	Set(context.Context, any) diag.Diagnostics
}, diags *diag.Diagnostics) {
	var m handlerModel
	diags.Append(get(ctx, &m)...)
	c, ok := r.clients(ctx, diags)
	if !ok || diags.HasError() {
		return
	}
	if err := r.converge(ctx, c, &m, diags); err != nil {
		diags.AddError("Deploying the interruption Lambda", err.Error())
	}
	if m.RoleARN.ValueString() != "" {
		diags.Append(state.Set(ctx, &m)...)
	}
}

func (r *handlerResource) converge(ctx context.Context, c handlerClients, m *handlerModel, diags *diag.Diagnostics) error {
	name := m.Name.ValueString()
	tags := stringMap(ctx, m.Tags, diags)
	policy, err := r.policy(ctx, *m, diags)
	if err != nil {
		return err
	}
	arn, err := ensureLambdaRole(ctx, c.iam, name, policy, tags)
	if err != nil {
		return err
	}
	m.ID, m.RoleARN, m.PolicyJSON = m.Name, types.StringValue(arn), types.StringValue(policy)
	m.FunctionARN, m.MappingID = types.StringValue(""), types.StringValue("")
	if err := ensureLogGroup(ctx, c.logs, m.LogGroup.ValueString(), int32(m.LogRetentionDays.ValueInt64()), tags); err != nil { //nolint:gosec // a listed value
		return err
	}
	fn, err := r.ensureFunction(ctx, c.lambda, *m)
	if err != nil {
		return err
	}
	m.FunctionARN, m.CodeSHA256 = types.StringValue(aws.ToString(fn.FunctionArn)), types.StringValue(aws.ToString(fn.CodeSha256))
	id, err := ensureMapping(ctx, c.lambda, *m)
	if err != nil {
		return err
	}
	m.MappingID = types.StringValue(id)
	if err := ensureAccessEntry(ctx, c.eks, m.ClusterName.ValueString(), arn); err != nil {
		return err
	}
	return applyLambdaRBAC(ctx, c.kube)
}

// ensureLambdaRole makes the function's role, trusted by Lambda, with its
// policy; it returns the role's ARN.
func ensureLambdaRole(ctx context.Context, c *iam.Client, name, policy string, tags map[string]string) (string, error) {
	var arn string
	out, err := c.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String(name), AssumeRolePolicyDocument: aws.String(lambdaTrust),
		Description: aws.String("Stowage's interruption Lambda"), Tags: iamTags(tags)})
	switch {
	case err == nil:
		arn = aws.ToString(out.Role.Arn)
	case errorCode(err) == "EntityAlreadyExists":
		got, err := c.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(name)})
		if err != nil {
			return "", fmt.Errorf("reading role %s: %w", name, err)
		}
		arn = aws.ToString(got.Role.Arn)
		if _, err := c.UpdateAssumeRolePolicy(ctx, &iam.UpdateAssumeRolePolicyInput{RoleName: aws.String(name), PolicyDocument: aws.String(lambdaTrust)}); err != nil {
			return "", fmt.Errorf("trusting Lambda with role %s: %w", name, err)
		}
		if err := retagRole(ctx, c, name, nil, tags); err != nil {
			return "", err
		}
	default:
		return "", fmt.Errorf("creating role %s: %w", name, err)
	}
	if _, err := c.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: aws.String(name), PolicyName: aws.String("StowageInterruptionLambda"),
		PolicyDocument: aws.String(policy)}); err != nil {
		return "", fmt.Errorf("putting the policy of role %s: %w", name, err)
	}
	return arn, nil
}

func ensureLogGroup(ctx context.Context, c *cloudwatchlogs.Client, name string, days int32, tags map[string]string) error {
	_, err := c.CreateLogGroup(ctx, &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String(name), Tags: tags})
	if err != nil && errorCode(err) != "ResourceAlreadyExistsException" {
		return fmt.Errorf("creating log group %s: %w", name, err)
	}
	if _, err := c.PutRetentionPolicy(ctx, &cloudwatchlogs.PutRetentionPolicyInput{LogGroupName: aws.String(name), RetentionInDays: aws.Int32(days)}); err != nil {
		return fmt.Errorf("setting the retention of log group %s: %w", name, err)
	}
	return nil
}

// functionSettings is the function's configuration from the model.
func functionSettings(ctx context.Context, m handlerModel) (lambdatypes.Environment, *lambdatypes.VpcConfig) {
	var d diag.Diagnostics
	vpc := &lambdatypes.VpcConfig{SubnetIds: setStrings(ctx, m.SubnetIDs, &d), SecurityGroupIds: setStrings(ctx, m.SecurityGroupIDs, &d)}
	if vpc.SubnetIds == nil {
		vpc.SubnetIds, vpc.SecurityGroupIds = []string{}, []string{}
	}
	return lambdatypes.Environment{Variables: m.env()}, vpc
}

// ensureFunction creates the function from the embedded code, or updates
// its configuration and, when the code differs (a provider upgrade), its code.
func (r *handlerResource) ensureFunction(ctx context.Context, c *lambda.Client, m handlerModel) (*lambdatypes.FunctionConfiguration, error) {
	code, err := lambdazip.Code(m.Architecture.ValueString())
	if err != nil {
		return nil, err
	}
	env, vpc := functionSettings(ctx, m)
	arch := []lambdatypes.Architecture{lambdatypes.Architecture(m.Architecture.ValueString())}
	name := aws.String(m.Name.ValueString())
	got, err := c.GetFunction(ctx, &lambda.GetFunctionInput{FunctionName: name})
	if isNotFound(err) {
		var out *lambda.CreateFunctionOutput
		err = wait.PollUntilContextTimeout(ctx, 2*time.Second, roleVisibleTimeout, true, func(ctx context.Context) (bool, error) {
			out, err = c.CreateFunction(ctx, &lambda.CreateFunctionInput{FunctionName: name, Role: aws.String(m.RoleARN.ValueString()),
				Runtime: lambdatypes.RuntimeProvidedal2023, Handler: aws.String("bootstrap"), Code: &lambdatypes.FunctionCode{ZipFile: code},
				Architectures: arch, Timeout: aws.Int32(int32(m.Timeout.ValueInt64())), MemorySize: aws.Int32(int32(m.MemorySize.ValueInt64())), //nolint:gosec // validated
				Environment: &env, VpcConfig: vpc, Description: aws.String("Stowage's interruption Lambda")})
			if err != nil && strings.Contains(err.Error(), "cannot be assumed") {
				return false, nil // the new role is not visible to Lambda yet
			}
			return true, err
		})
		if err != nil {
			return nil, fmt.Errorf("creating function %s: %w", *name, err)
		}
		return &lambdatypes.FunctionConfiguration{FunctionArn: out.FunctionArn, CodeSha256: out.CodeSha256}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading function %s: %w", *name, err)
	}
	cfg, err := c.UpdateFunctionConfiguration(ctx, &lambda.UpdateFunctionConfigurationInput{FunctionName: name,
		Role: aws.String(m.RoleARN.ValueString()), Timeout: aws.Int32(int32(m.Timeout.ValueInt64())), //nolint:gosec // validated
		MemorySize: aws.Int32(int32(m.MemorySize.ValueInt64())), Environment: &env, VpcConfig: vpc}) //nolint:gosec // validated
	if err != nil {
		return nil, fmt.Errorf("configuring function %s: %w", *name, err)
	}
	if aws.ToString(got.Configuration.CodeSha256) == lambdazip.SHA256(code) && slices0(got.Configuration.Architectures) == string(arch[0]) {
		return &lambdatypes.FunctionConfiguration{FunctionArn: cfg.FunctionArn, CodeSha256: cfg.CodeSha256}, nil
	}
	out, err := c.UpdateFunctionCode(ctx, &lambda.UpdateFunctionCodeInput{FunctionName: name, ZipFile: code, Architectures: arch})
	if err != nil {
		return nil, fmt.Errorf("updating the code of function %s: %w", *name, err)
	}
	return &lambdatypes.FunctionConfiguration{FunctionArn: out.FunctionArn, CodeSha256: out.CodeSha256}, nil
}

func slices0(a []lambdatypes.Architecture) string {
	if len(a) == 0 {
		return ""
	}
	return string(a[0])
}

// ensureMapping maps the queue to the function, batching and reporting
// failed records; an existing mapping of the queue is updated.
func ensureMapping(ctx context.Context, c *lambda.Client, m handlerModel) (string, error) {
	list, err := c.ListEventSourceMappings(ctx, &lambda.ListEventSourceMappingsInput{FunctionName: aws.String(m.Name.ValueString())})
	if err != nil {
		return "", fmt.Errorf("listing the function's event source mappings: %w", err)
	}
	batch, window := aws.Int32(int32(m.BatchSize.ValueInt64())), aws.Int32(int32(m.BatchWindow.ValueInt64())) //nolint:gosec // validated
	types := []lambdatypes.FunctionResponseType{lambdatypes.FunctionResponseTypeReportBatchItemFailures}
	for _, e := range list.EventSourceMappings {
		if aws.ToString(e.EventSourceArn) != m.QueueARN.ValueString() {
			continue
		}
		_, err := c.UpdateEventSourceMapping(ctx, &lambda.UpdateEventSourceMappingInput{UUID: e.UUID, Enabled: aws.Bool(true),
			BatchSize: batch, MaximumBatchingWindowInSeconds: window, FunctionResponseTypes: types})
		if err != nil {
			return "", fmt.Errorf("updating event source mapping %s: %w", aws.ToString(e.UUID), err)
		}
		return aws.ToString(e.UUID), nil
	}
	out, err := c.CreateEventSourceMapping(ctx, &lambda.CreateEventSourceMappingInput{FunctionName: aws.String(m.Name.ValueString()),
		EventSourceArn: aws.String(m.QueueARN.ValueString()), BatchSize: batch, MaximumBatchingWindowInSeconds: window,
		FunctionResponseTypes: types, Enabled: aws.Bool(true)})
	if err != nil {
		return "", fmt.Errorf("mapping the queue to the function: %w", err)
	}
	return aws.ToString(out.UUID), nil
}

// ensureAccessEntry maps the role to the Lambda's group in the cluster.
func ensureAccessEntry(ctx context.Context, c *eks.Client, cluster, roleARN string) error {
	_, err := c.CreateAccessEntry(ctx, &eks.CreateAccessEntryInput{ClusterName: aws.String(cluster), PrincipalArn: aws.String(roleARN),
		KubernetesGroups: []string{lambdarbac.Group}})
	if errorCode(err) == "ResourceInUseException" {
		_, err = c.UpdateAccessEntry(ctx, &eks.UpdateAccessEntryInput{ClusterName: aws.String(cluster), PrincipalArn: aws.String(roleARN),
			KubernetesGroups: []string{lambdarbac.Group}})
	}
	if err != nil {
		return fmt.Errorf("giving role %s an access entry in cluster %s (cluster_name): %w", roleARN, cluster, err)
	}
	return nil
}

// lambdaRBAC is controller/deploy/lambda's ClusterRole and binding.
func lambdaRBAC() ([]*unstructured.Unstructured, error) {
	objs, err := lambdarbac.Manifests()
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		u, err := toUnstructured(o)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

func applyLambdaRBAC(ctx context.Context, c *kube.Client) error {
	objs, err := lambdaRBAC()
	if err != nil {
		return err
	}
	for _, o := range objs {
		if _, err := c.ApplyObject(ctx, o, false); err != nil {
			return err
		}
	}
	return nil
}
