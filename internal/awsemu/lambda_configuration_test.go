package awsemu_test

import (
	"context"
	"slices"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

func TestFunctionConfigurationUpdatesThroughTheSDK(t *testing.T) {
	e := awsemu.New(awsemu.DefaultConfig())
	e.SetFunctionRuntime(&goRuntime{})
	l := lambda.NewFromConfig(client(t, e))
	ctx := context.Background()
	createFunction(t, l, "interruption", zipOf(t, "x"), 30)
	out, err := l.UpdateFunctionConfiguration(ctx, &lambda.UpdateFunctionConfigurationInput{FunctionName: awssdk.String("interruption"),
		Timeout: awssdk.Int32(60), Environment: &lambdatypes.Environment{Variables: map[string]string{"LOG_LEVEL": "debug"}},
		VpcConfig: &lambdatypes.VpcConfig{SubnetIds: []string{"subnet-1"}, SecurityGroupIds: []string{"sg-1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if awssdk.ToInt32(out.Timeout) != 60 || out.Environment.Variables["LOG_LEVEL"] != "debug" || len(out.Environment.Variables) != 1 {
		t.Errorf("configuration %+v", out)
	}
	got, err := l.GetFunction(ctx, &lambda.GetFunctionInput{FunctionName: awssdk.String("interruption")})
	if err != nil || got.Configuration.VpcConfig == nil || !slices.Equal(got.Configuration.VpcConfig.SubnetIds, []string{"subnet-1"}) {
		t.Fatalf("function %+v, %v; want it in subnet-1", got, err)
	}
	// A VPC configuration with no subnets takes the function out of its VPC.
	if _, err := l.UpdateFunctionConfiguration(ctx, &lambda.UpdateFunctionConfigurationInput{FunctionName: awssdk.String("interruption"),
		VpcConfig: &lambdatypes.VpcConfig{SubnetIds: []string{}, SecurityGroupIds: []string{}}}); err != nil {
		t.Fatal(err)
	}
	got, _ = l.GetFunction(ctx, &lambda.GetFunctionInput{FunctionName: awssdk.String("interruption")})
	if got.Configuration.VpcConfig != nil && len(got.Configuration.VpcConfig.SubnetIds) > 0 {
		t.Errorf("still in a VPC: %+v", got.Configuration.VpcConfig)
	}
	if _, err := l.UpdateFunctionConfiguration(ctx, &lambda.UpdateFunctionConfigurationInput{FunctionName: awssdk.String("nothing"),
		Timeout: awssdk.Int32(10)}); code(err) != "ResourceNotFoundException" {
		t.Errorf("an unknown function: %v", err)
	}
	if fns := e.Functions(); !slices.Equal(fns, []string{"interruption"}) {
		t.Errorf("functions %v", fns)
	}
	_ = e.Shutdown()
}
