package provider_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"regexp"
	"slices"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/stowage-dev/stowage/controller/aws/iampolicy"
	"github.com/stowage-dev/stowage/provider/internal/lambdazip"
)

var clusterRoles = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}

func handlerConfig(extra string) string {
	return awsProvider() + fmt.Sprintf(`
resource "stowage_interruption_queue" "q" {
  name = "acc-handler-queue"
}

resource "stowage_interruption_handler" "h" {
  name             = "acc-interruption"
  queue_arn        = stowage_interruption_queue.q.arn
  cluster_name     = %q
  cluster_endpoint = "https://acc.example.com"
  cluster_ca_data  = %q
  architecture     = "x86_64"
  %s
}
`, eksCluster, base64.StdEncoding.EncodeToString([]byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")), extra)
}

// TestAccInterruptionHandler deploys the Lambda from the provider's embedded
// code with its role, log group, mapping, access entry and RBAC; imports,
// updates, finds an older code (an upgrade) and hand-made drift, and puts
// them right; destroys everything.
func TestAccInterruptionHandler(t *testing.T) {
	const addr = "stowage_interruption_handler.h"
	code, err := lambdazip.Code("x86_64")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	l, e := lambda.NewFromConfig(adminAWS()), eks.NewFromConfig(adminAWS())
	updated := `log_retention_days       = 30
  batch_size               = 5
  rebalance_recommendation = "mark"
  timeout_seconds          = 20
  tags                     = { team = "platform" }`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		CheckDestroy:             checkHandlerGone,
		Steps: []resource.TestStep{
			{
				Config: handlerConfig(""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("code_sha256"), knownvalue.StringExact(lambdazip.SHA256(code))),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("function_arn"), knownvalue.StringExact("arn:aws:lambda:us-east-1:123456789012:function:acc-interruption")),
				},
				Check: checkHandler(t, "14", 10),
			},
			{ResourceName: addr, ImportState: true, ImportStateVerify: true, ImportStateId: "acc-interruption"},
			{
				Config:           handlerConfig(updated),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)}},
				Check:            checkHandler(t, "30", 5),
			},
			{
				// An older code (as deployed by an older provider), the mapping, the access entry and the
				// ClusterRole removed by hand: the apply puts them back, the code updated in place.
				PreConfig: func() {
					l.UpdateFunctionCode(ctx, &lambda.UpdateFunctionCodeInput{FunctionName: awssdk.String("acc-interruption"), ZipFile: olderZip(t)})
					for _, id := range access.emu.EventSourceMappings() {
						l.DeleteEventSourceMapping(ctx, &lambda.DeleteEventSourceMappingInput{UUID: awssdk.String(id)})
					}
					e.DeleteAccessEntry(ctx, &eks.DeleteAccessEntryInput{ClusterName: awssdk.String(eksCluster),
						PrincipalArn: awssdk.String("arn:aws:iam::123456789012:role/acc-interruption")})
					bed.dyn.Resource(clusterRoles).Delete(ctx, "stowage-interruption-lambda", metav1.DeleteOptions{})
				},
				Config:           handlerConfig(updated),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)}},
				Check: resource.ComposeTestCheckFunc(checkHandler(t, "30", 5), func(*terraform.State) error {
					got, err := l.GetFunction(ctx, &lambda.GetFunctionInput{FunctionName: awssdk.String("acc-interruption")})
					if err != nil || awssdk.ToString(got.Configuration.CodeSha256) != lambdazip.SHA256(code) {
						return fmt.Errorf("the function's code is %s (%v), want the provider's %s", awssdk.ToString(got.Configuration.CodeSha256), err, lambdazip.SHA256(code))
					}
					return nil
				}),
			},
			{Config: handlerConfig(updated), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
			{ResourceName: addr, ImportState: true, ImportStateVerify: true, ImportStateId: "acc-interruption"},
		},
	})
}

func TestAccInterruptionHandlerRefusesBadInput(t *testing.T) {
	bad := func(extra, want string) resource.TestStep {
		return resource.TestStep{Config: handlerConfig(extra), PlanOnly: true, ExpectError: regexp.MustCompile(want)}
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		Steps: []resource.TestStep{
			bad(`log_retention_days = 10`, `(?s)Invalid log_retention_days.*not a retention CloudWatch Logs offers`),
			bad(`batch_size = 20`, `(?s)Invalid batch_size.*from 1 to 10`),
			bad(`subnet_ids = ["subnet-1"]`, `(?s)Invalid subnet_ids.*go together`),
			bad(`rebalance_recommendation = "replace"`, `(?s)Invalid rebalance_recommendation.*REBALANCE_RECOMMENDATION`),
			bad(`log_level = "loud"`, `(?s)Invalid log_level`),
			{Config: awsProvider() + `resource "stowage_interruption_handler" "h" {
  name             = "acc interruption"
  queue_arn        = "arn:aws:sqs:us-east-1:123456789012:q"
  cluster_name     = "c"
  cluster_endpoint = "http://acc.example.com"
  cluster_ca_data  = "bm90IHBlbQ=="
  architecture     = "sparc"
}`, PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)Invalid name.*Invalid (architecture|cluster_endpoint)`)},
		},
	})
}

// checkHandler looks at every part in the emulator and the cluster.
func checkHandler(t *testing.T, retention string, batch int32) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx := context.Background()
		c := lambda.NewFromConfig(adminAWS())
		got, err := c.GetFunction(ctx, &lambda.GetFunctionInput{FunctionName: awssdk.String("acc-interruption")})
		if err != nil {
			return err
		}
		if env := got.Configuration.Environment.Variables; env["CLUSTER_NAME"] != eksCluster || env["CLUSTER_ENDPOINT"] != "https://acc.example.com" {
			return fmt.Errorf("environment %v", env)
		}
		maps, err := c.ListEventSourceMappings(ctx, &lambda.ListEventSourceMappingsInput{FunctionName: awssdk.String("acc-interruption")})
		if err != nil || len(maps.EventSourceMappings) != 1 || awssdk.ToInt32(maps.EventSourceMappings[0].BatchSize) != batch ||
			!slices.Contains(maps.EventSourceMappings[0].FunctionResponseTypes, lambdatypes.FunctionResponseTypeReportBatchItemFailures) {
			return fmt.Errorf("mappings %+v (%v), want one of batches of %d reporting failures", maps, err, batch)
		}
		inline, _, _ := access.emu.RolePolicies("acc-interruption")
		want, _ := iampolicy.Lambda(iampolicy.LambdaConfig{Region: "us-east-1", AccountID: "123456789012",
			QueueARN: "arn:aws:sqs:us-east-1:123456789012:acc-handler-queue", LogGroup: "/aws/lambda/acc-interruption"})
		if inline["StowageInterruptionLambda"] != want.JSON() {
			return fmt.Errorf("the role's policy %s, want %s", inline["StowageInterruptionLambda"], want.JSON())
		}
		entry, ok := access.emu.AccessEntryFor(eksCluster, "arn:aws:iam::123456789012:role/acc-interruption")
		if !ok || !slices.Equal(entry.Groups, []string{"stowage:interruption-lambda"}) {
			return fmt.Errorf("access entry %+v (%v)", entry, ok)
		}
		if _, err := bed.dyn.Resource(clusterRoles).Get(ctx, "stowage-interruption-lambda", metav1.GetOptions{}); err != nil {
			return fmt.Errorf("the Lambda's ClusterRole: %w", err)
		}
		return checkRetention(retention)
	}
}

func checkRetention(days string) error {
	out, err := cloudwatchlogs.NewFromConfig(adminAWS()).DescribeLogGroups(context.Background(),
		&cloudwatchlogs.DescribeLogGroupsInput{LogGroupNamePrefix: awssdk.String("/aws/lambda/acc-interruption")})
	if err != nil || len(out.LogGroups) != 1 || fmt.Sprint(awssdk.ToInt32(out.LogGroups[0].RetentionInDays)) != days {
		return fmt.Errorf("log groups %+v (%v), want /aws/lambda/acc-interruption keeping %s days", out, err, days)
	}
	return nil
}

func checkHandlerGone(*terraform.State) error {
	if fns := access.emu.Functions(); len(fns) > 0 {
		return fmt.Errorf("functions left: %v", fns)
	}
	if m := access.emu.EventSourceMappings(); len(m) > 0 {
		return fmt.Errorf("mappings left: %v", m)
	}
	if _, ok := access.emu.AccessEntryFor(eksCluster, "arn:aws:iam::123456789012:role/acc-interruption"); ok {
		return fmt.Errorf("the access entry is left")
	}
	if g := access.emu.LogGroups(); len(g) > 0 {
		return fmt.Errorf("log groups left: %v", g)
	}
	if slices.Contains(access.emu.Roles(), "acc-interruption") {
		return fmt.Errorf("the role is left")
	}
	if _, err := bed.dyn.Resource(clusterRoles).Get(context.Background(), "stowage-interruption-lambda", metav1.GetOptions{}); err == nil {
		return fmt.Errorf("the Lambda's ClusterRole is left")
	}
	return nil
}

// olderZip is a deployment package of another version: a bootstrap that is not this provider's.
func olderZip(t *testing.T) []byte {
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	f, err := w.Create("bootstrap")
	if err == nil {
		_, err = f.Write([]byte("#!/bin/sh\necho an older stowage\n"))
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
