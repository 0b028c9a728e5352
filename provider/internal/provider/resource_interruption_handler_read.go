package provider

import (
	"context"
	"reflect"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	lambdarbac "github.com/stowage-dev/stowage/controller/deploy/lambda"
	"github.com/stowage-dev/stowage/lambda/config"
)

// Read rebuilds the model from what AWS and the cluster hold: the function's
// configuration and code, the role's policy, the log group's retention, the
// mapping, the access entry and the RBAC. A part missing or changed shows as
// a change the next apply makes back.
func (r *handlerResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m handlerModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	c, ok := r.clients(ctx, &resp.Diagnostics)
	if !ok || resp.Diagnostics.HasError() {
		return
	}
	got, err := c.lambda.GetFunction(ctx, &lambda.GetFunctionInput{FunctionName: aws.String(m.ID.ValueString())})
	if isNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Reading the interruption Lambda", err.Error())
		return
	}
	m.readFunction(ctx, got.Configuration)
	for _, step := range []func() error{
		func() error { return m.readRole(ctx, c.iam) },
		func() error { return m.readLogGroup(ctx, c.logs) },
		func() error { return m.readMapping(ctx, c.lambda) },
		func() error { return m.readAccessEntry(ctx, c.eks) },
		func() error { return m.readRBAC(ctx, c) },
	} {
		if err := step(); err != nil {
			resp.Diagnostics.AddError("Reading the interruption Lambda", err.Error())
			return
		}
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (m *handlerModel) readFunction(ctx context.Context, fn *lambdatypes.FunctionConfiguration) {
	m.ID, m.Name, m.FunctionARN = types.StringValue(aws.ToString(fn.FunctionName)), types.StringValue(aws.ToString(fn.FunctionName)),
		types.StringValue(aws.ToString(fn.FunctionArn))
	m.RoleARN, m.CodeSHA256 = types.StringValue(aws.ToString(fn.Role)), types.StringValue(aws.ToString(fn.CodeSha256))
	m.LogGroup = types.StringValue("/aws/lambda/" + aws.ToString(fn.FunctionName))
	m.Timeout, m.MemorySize = types.Int64Value(int64(aws.ToInt32(fn.Timeout))), types.Int64Value(int64(aws.ToInt32(fn.MemorySize)))
	if len(fn.Architectures) > 0 {
		m.Architecture = types.StringValue(string(fn.Architectures[0]))
	}
	var env map[string]string
	if fn.Environment != nil {
		env = fn.Environment.Variables
	}
	into := map[string]*types.String{config.EnvClusterName: &m.ClusterName, config.EnvClusterEndpoint: &m.ClusterEndpoint,
		config.EnvClusterCA: &m.ClusterCA, config.EnvRebalance: &m.Rebalance, config.EnvLogLevel: &m.LogLevel}
	for k, p := range into {
		*p = types.StringValue(env[k])
	}
	subnets, groups := types.SetNull(types.StringType), types.SetNull(types.StringType)
	if v := fn.VpcConfig; v != nil && len(v.SubnetIds) > 0 {
		subnets, _ = types.SetValueFrom(ctx, types.StringType, v.SubnetIds)
		groups, _ = types.SetValueFrom(ctx, types.StringType, v.SecurityGroupIds)
	}
	m.SubnetIDs, m.SecurityGroupIDs = subnets, groups
}

// readRole reads the role's policy; a role gone reads as no policy.
func (m *handlerModel) readRole(ctx context.Context, c *iam.Client) error {
	name := m.Name.ValueString() // the role is named after the function
	pol, err := c.GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: aws.String(name), PolicyName: aws.String("StowageInterruptionLambda")})
	switch {
	case isNotFound(err):
		m.PolicyJSON = types.StringValue("")
	case err != nil:
		return err
	case !sameJSON(decodePolicy(pol.PolicyDocument), m.PolicyJSON.ValueString()):
		m.PolicyJSON = types.StringValue(decodePolicy(pol.PolicyDocument))
	}
	got, err := c.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(name)})
	if err == nil {
		tags := map[string]string{}
		for _, t := range got.Role.Tags {
			tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
		}
		m.Tags = mapValue(tags, m.Tags)
	}
	return nil
}

// readLogGroup reads the retention; a log group gone reads as none.
func (m *handlerModel) readLogGroup(ctx context.Context, c *cloudwatchlogs.Client) error {
	out, err := c.DescribeLogGroups(ctx, &cloudwatchlogs.DescribeLogGroupsInput{LogGroupNamePrefix: m.LogGroup.ValueStringPointer()})
	if err != nil {
		return err
	}
	m.LogRetentionDays = types.Int64Null()
	for _, g := range out.LogGroups {
		if aws.ToString(g.LogGroupName) == m.LogGroup.ValueString() && g.RetentionInDays != nil {
			m.LogRetentionDays = types.Int64Value(int64(*g.RetentionInDays))
		}
	}
	return nil
}

// readMapping reads the mapping; one gone, or that no longer reports
// failures per record, reads as no mapping.
func (m *handlerModel) readMapping(ctx context.Context, c *lambda.Client) error {
	m.MappingID = types.StringValue("")
	list, err := c.ListEventSourceMappings(ctx, &lambda.ListEventSourceMappingsInput{FunctionName: m.Name.ValueStringPointer()})
	if err != nil {
		return err
	}
	for _, e := range list.EventSourceMappings {
		if aws.ToString(e.EventSourceArn) != m.QueueARN.ValueString() && m.QueueARN.ValueString() != "" {
			continue
		}
		m.QueueARN = types.StringValue(aws.ToString(e.EventSourceArn))
		m.BatchSize, m.BatchWindow = types.Int64Value(int64(aws.ToInt32(e.BatchSize))), types.Int64Value(int64(aws.ToInt32(e.MaximumBatchingWindowInSeconds)))
		enabled := aws.ToString(e.State) != "Disabled" && aws.ToString(e.State) != "Disabling"
		if enabled && slices.Contains(e.FunctionResponseTypes, lambdatypes.FunctionResponseTypeReportBatchItemFailures) {
			m.MappingID = types.StringValue(aws.ToString(e.UUID))
		}
	}
	return nil
}

func (m *handlerModel) readAccessEntry(ctx context.Context, c *eks.Client) error {
	groups := []string{}
	out, err := c.DescribeAccessEntry(ctx, &eks.DescribeAccessEntryInput{ClusterName: m.ClusterName.ValueStringPointer(), PrincipalArn: m.RoleARN.ValueStringPointer()})
	switch {
	case isNotFound(err):
	case err != nil:
		return err
	default:
		groups = out.AccessEntry.KubernetesGroups
	}
	m.AccessGroups, _ = types.ListValueFrom(ctx, types.StringType, groups)
	return nil
}

// readRBAC keeps the ClusterRole's name while both objects are there as
// applied (a dry-run apply would change nothing).
func (m *handlerModel) readRBAC(ctx context.Context, c handlerClients) error {
	objs, err := lambdaRBAC()
	if err != nil {
		return err
	}
	m.ClusterRole = types.StringValue(lambdarbac.ClusterRole)
	for _, o := range objs {
		live, err := c.kube.GetObject(ctx, o)
		if err != nil {
			return err
		}
		if live == nil {
			m.ClusterRole = types.StringValue("")
			continue
		}
		would, err := c.kube.ApplyObject(ctx, o, true)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(comparable(would), comparable(live)) {
			m.ClusterRole = types.StringValue("")
		}
	}
	return nil
}

func (r *handlerResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m handlerModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	c, ok := r.clients(ctx, &resp.Diagnostics)
	if !ok || resp.Diagnostics.HasError() {
		return
	}
	name := m.ID.ValueString()
	steps := []struct {
		what string
		run  func() error
	}{
		{"the event source mapping", func() error {
			if id := m.MappingID.ValueString(); id != "" {
				_, err := c.lambda.DeleteEventSourceMapping(ctx, &lambda.DeleteEventSourceMappingInput{UUID: aws.String(id)})
				return err
			}
			return nil
		}},
		{"the function", func() error {
			_, err := c.lambda.DeleteFunction(ctx, &lambda.DeleteFunctionInput{FunctionName: aws.String(name)})
			return err
		}},
		{"the log group", func() error {
			_, err := c.logs.DeleteLogGroup(ctx, &cloudwatchlogs.DeleteLogGroupInput{LogGroupName: aws.String("/aws/lambda/" + name)})
			return err
		}},
		{"the access entry", func() error {
			_, err := c.eks.DeleteAccessEntry(ctx, &eks.DeleteAccessEntryInput{ClusterName: m.ClusterName.ValueStringPointer(), PrincipalArn: m.RoleARN.ValueStringPointer()})
			return err
		}},
		{"the role", func() error { return deleteRole(ctx, c.iam, name) }},
		{"the ClusterRole and its binding", func() error {
			objs, err := lambdaRBAC()
			for _, o := range objs {
				if err == nil {
					err = c.kube.DeleteObject(ctx, o)
				}
			}
			return err
		}},
	}
	for _, s := range steps {
		if err := s.run(); err != nil && !isNotFound(err) {
			resp.Diagnostics.AddError("Deleting "+s.what+" of the interruption Lambda", err.Error())
			return
		}
	}
}
