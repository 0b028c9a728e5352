package moduletest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testbed"
	"github.com/stowage-dev/stowage/internal/tfbed"
	"github.com/stowage-dev/stowage/internal/tfcli"
)

// stowageRoot calls modules/stowage as a platform team moving from the
// terraform-aws-eks karpenter module would, keeping Karpenter's namespace and
// service account, with one pool made from a local that the policy reads too.
const stowageRoot = `
terraform {
  required_providers {
    stowage = { source = "stowage-dev/stowage" }
  }
}

variable "aws_endpoint" { type = string }
variable "cluster_endpoint" { type = string }
variable "cluster_ca" { type = string }
variable "oidc_provider_arn" { type = string }
variable "lambda_architecture" { type = string }
variable "irsa" { type = bool }

provider "stowage" {
  aws_region       = "us-east-1"
  aws_endpoint_url = var.aws_endpoint
}

locals {
  pools = [{
    name = "general"
    requirement = [
      { key = "stowage.dev/instance-family", operator = "In", values = ["m6i", "c6i"] },
      { key = "stowage.dev/capacity-type", operator = "In", values = ["on-demand"] },
    ]
  }]
}

module "stowage" {
  source = "./stowage"

  cluster_name                       = "bed"
  cluster_endpoint                   = var.cluster_endpoint
  cluster_certificate_authority_data = var.cluster_ca

  enable_pod_identity    = !var.irsa
  enable_irsa            = var.irsa
  irsa_oidc_provider_arn = var.irsa ? var.oidc_provider_arn : null
  namespace              = "karpenter"
  service_account        = "karpenter"

  node_pools                        = local.pools
  queue_message_retention_seconds   = 600
  interruption_handler_architecture = var.lambda_architecture
  controller                        = { settings = { "batch-idle-duration" = "1s" } }
  tags                              = { team = "platform" }
  create_spot_service_linked_role   = true
}

resource "stowage_node_class" "general" {
  name = "general"
  role = module.stowage.node_iam_role_name
  ami_selector_term {
    alias = "al2023@latest"
  }
  subnet_selector_term {
    tags = { "stowage.dev/discovery" = "bed" }
  }
  security_group_selector_term {
    tags = { "stowage.dev/discovery" = "bed" }
  }
}

resource "stowage_node_pool" "general" {
  for_each                 = { for p in local.pools : p.name => p }
  name                     = each.key
  allow_destroy_with_nodes = true
  node_class_ref {
    name = stowage_node_class.general.name
  }
  dynamic "requirement" {
    for_each = each.value.requirement
    content {
      key      = requirement.value.key
      operator = requirement.value.operator
      values   = requirement.value.values
    }
  }
}

output "stowage" {
  value = module.stowage
}
`

// TestStowageModuleDeploysEverythingAndDestroysCleanly applies
// modules/stowage on the bed with Pod Identity, then moves it to IRSA, each
// apply followed by a plan with no change; runs the controller exactly as
// the module deployed it (its namespace, service account and IRSA role, every
// AWS call authorized against the generated policy) until it launches a node
// for a workload; and destroys everything with the node still running,
// which the controller must drain before its role goes: nothing is left in
// the emulator or in the cluster.
func TestStowageModuleDeploysEverythingAndDestroysCleanly(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	before, err := e.Objects(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dir := root(t, "stowage", stowageRoot)
	e.tf.MustRun(t, dir, "init", "-input=false")
	if out := e.tf.MustRun(t, dir, "validate"); !strings.Contains(out, "The configuration is valid") {
		t.Fatalf("terraform validate:\n%s", out)
	}
	if out, err := e.tf.Run("..", "fmt", "-check", "-recursive", "stowage"); err != nil {
		t.Errorf("terraform fmt -check: files not formatted:\n%s", out)
	}
	v := e.Values()
	vars := func(irsa string) []string {
		return tfbed.Flags(map[string]string{"aws_endpoint": v["aws_endpoint"], "cluster_endpoint": v["cluster_endpoint"],
			"cluster_ca": v["cluster_ca"], "oidc_provider_arn": v["oidc_provider_arn"], "lambda_architecture": v["lambda_architecture"], "irsa": irsa})
	}
	destroy := append([]string{"destroy", "-input=false", "-auto-approve"}, vars("true")...)
	e.DestroyOnFailure(t, dir, destroy)
	applyAndPlanClean(t, e, dir, vars("false"), "Plan: 8 to add, 0 to change, 0 to destroy")
	out := stowageOutputs(t, e, dir)
	checkPodIdentity(t, e, out)
	checkAWSSide(t, e, out)

	applyAndPlanClean(t, e, dir, vars("true"), "")
	out = stowageOutputs(t, e, dir)
	checkIRSA(t, e, out)

	t.Run("the controller, as the module deployed it, launches for the pool and drains it on destroy", func(t *testing.T) {
		p, err := e.RunController(ctx, "karpenter")
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if t.Failed() {
				t.Logf("the controller's log:\n%s", tfbed.LogTail(p, 40))
			}
			_ = p.Stop()
		}()
		w := tfbed.Workload{Namespace: "shop", Name: "inflate", Replicas: 2, NodeSelector: map[string]string{v1alpha1.LabelNodePool: "general"},
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
		if err := e.Run(ctx, w); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := e.Delete(ctx, w); err != nil {
				t.Error(err)
			}
		}()
		tfbed.Eventually(t, 3*time.Minute, func() error {
			if err := p.Err(); err != nil {
				return err
			}
			_, err := e.Nodes(ctx, w)
			return err
		})
		// The pool goes first, its node drained and terminated by the
		// controller with the permissions of its role, which goes last.
		e.tf.MustRun(t, dir, destroy...)
	})
	if !t.Failed() { // a failed test's leftovers are its cleanup's to destroy
		e.ExpectClean(t, before)
	}
}

// applyAndPlanClean applies, wanting the plan summary when given, and then
// plans no change.
func applyAndPlanClean(t *testing.T, e *env, dir string, vars []string, summary string) {
	t.Helper()
	plan := e.tf.MustRun(t, dir, append([]string{"plan", "-input=false", "-out=tfplan"}, vars...)...)
	if summary != "" && !strings.Contains(plan, summary) {
		t.Fatalf("the plan does not say %q:\n%s", summary, plan)
	}
	e.tf.MustRun(t, dir, "apply", "-input=false", "tfplan")
	if again, err := e.tf.Run(dir, append([]string{"plan", "-input=false", "-detailed-exitcode"}, vars...)...); err != nil || !strings.Contains(again, "No changes") {
		t.Fatalf("a plan after apply is not empty (%v):\n%s", err, again)
	}
}

func stowageOutputs(t *testing.T, e *env, dir string) map[string]any {
	t.Helper()
	return outputJSON[map[string]any](t, e, dir, "stowage")
}

// checkPodIdentity finds the association for karpenter/karpenter and no IRSA
// annotation on the service account.
func checkPodIdentity(t *testing.T, e *env, out map[string]any) {
	t.Helper()
	assocs := e.Bed.Emulator.PodIdentityAssociations()
	if len(assocs) != 1 || assocs[0].Namespace != "karpenter" || assocs[0].ServiceAccount != "karpenter" || assocs[0].RoleARN != out["iam_role_arn"] {
		t.Errorf("Pod Identity associations %+v, want karpenter/karpenter to %v", assocs, out["iam_role_arn"])
	}
	if out["pod_identity_association_id"] == nil {
		t.Error("pod_identity_association_id is null with Pod Identity")
	}
	if a := serviceAccount(t, e).Annotations["eks.amazonaws.com/role-arn"]; a != "" {
		t.Errorf("the service account is annotated %s with Pod Identity", a)
	}
	if trust := roleTrust(t, e, "StowageController-bed"); !strings.Contains(trust, "pods.eks.amazonaws.com") {
		t.Errorf("the controller's role does not trust Pod Identity: %s", trust)
	}
}

// checkIRSA finds the service account annotated with the role, the role
// trusting the bed's issuer for that service account only, and no
// association.
func checkIRSA(t *testing.T, e *env, out map[string]any) {
	t.Helper()
	if a := serviceAccount(t, e).Annotations["eks.amazonaws.com/role-arn"]; a != out["iam_role_arn"] {
		t.Errorf("the service account is annotated %q, want %v", a, out["iam_role_arn"])
	}
	if trust := roleTrust(t, e, "StowageController-bed"); !strings.Contains(trust, "system:serviceaccount:karpenter:karpenter") {
		t.Errorf("the controller's role does not trust karpenter/karpenter through the issuer: %s", trust)
	}
	if assocs := e.Bed.Emulator.PodIdentityAssociations(); len(assocs) > 0 {
		t.Errorf("Pod Identity associations left with IRSA: %+v", assocs)
	}
}

// checkAWSSide reads back what the module made in the emulator.
func checkAWSSide(t *testing.T, e *env, out map[string]any) {
	t.Helper()
	inline, _, ok := e.Bed.Emulator.RolePolicies("StowageController-bed")
	policy := ""
	for _, doc := range inline {
		policy = doc
	}
	if !ok || policy != out["controller_policy_json"] {
		t.Errorf("the controller's role holds %v, want the generated policy", inline)
	}
	if !strings.Contains(policy, `"aws:RequestTag/stowage.dev/nodepool":["general"]`) {
		t.Errorf("the policy does not limit launches to the pool general: %s", policy)
	}
	if out["node_iam_role_name"] != "StowageNodeRole-bed" || out["instance_profile_name"] != "StowageNodeRole-bed" {
		t.Errorf("node role %v, instance profile %v", out["node_iam_role_name"], out["instance_profile_name"])
	}
	attrs, ok := e.Bed.Emulator.QueueAttributes("stowage-bed")
	if !ok || attrs["MessageRetentionPeriod"] != "600" || !strings.Contains(attrs["RedrivePolicy"], "stowage-bed-dlq") {
		t.Errorf("queue stowage-bed: %v", attrs)
	}
	if rules, _ := out["event_rules"].(map[string]any); len(rules) != 6 {
		t.Errorf("event rules %v, want six", out["event_rules"])
	}
	if _, ok := e.Bed.Emulator.AccessEntryFor("bed", out["interruption_handler_role_arn"].(string)); !ok {
		t.Error("the interruption Lambda's role has no access entry")
	}
}

func serviceAccount(t *testing.T, e *env) corev1.ServiceAccount {
	t.Helper()
	var sa corev1.ServiceAccount
	if err := e.Bed.Admin.Get(context.Background(), client.ObjectKey{Namespace: "karpenter", Name: "karpenter"}, &sa); err != nil {
		t.Fatalf("reading the controller's service account karpenter/karpenter: %v", err)
	}
	return sa
}

// roleTrust reads a role's trust policy through the real SDK.
func roleTrust(t *testing.T, e *env, role string) string {
	t.Helper()
	c := iam.New(iam.Options{Region: testbed.Region, BaseEndpoint: awssdk.String(e.Bed.EmulatorURL),
		Credentials: credentials.NewStaticCredentialsProvider(awsemu.DefaultAccessKeyID, awsemu.DefaultSecretAccessKey, "")})
	got, err := c.GetRole(context.Background(), &iam.GetRoleInput{RoleName: awssdk.String(role)})
	if err != nil {
		t.Fatalf("reading role %s: %v", role, err)
	}
	doc, err := url.QueryUnescape(awssdk.ToString(got.Role.AssumeRolePolicyDocument))
	if err != nil || !json.Valid([]byte(doc)) {
		t.Fatalf("role %s's trust policy: %v %s", role, err, doc)
	}
	return doc
}

// TestStowageModuleRefusesBadInputs plans one module call per bad input and
// wants each validation's message, naming the input and the fix; then the
// combinations the preconditions refuse (Terraform evaluates them only once
// every variable is valid, so in a plan of their own).
func TestStowageModuleRefusesBadInputs(t *testing.T) {
	e := start(t)
	planBadCalls(t, e, map[string]string{
		`cluster_endpoint = "http://bed.example.com"`:                                         "cluster_endpoint must be the API server's https URL",
		`cluster_certificate_authority_data = "-----BEGIN CERTIFICATE-----"`:                  "cluster_certificate_authority_data must be a base64-encoded PEM certificate",
		`cluster_service_cidr = "10.100.0.0"`:                                                 "cluster_service_cidr must be a CIDR such as 10.100.0.0/16",
		`namespace = "kube-system"`:                                                           "namespace must be a namespace name",
		`service_account = "Karpenter_SA"`:                                                    "service_account must be a service account name",
		`irsa_oidc_provider_arn = "oidc.eks.us-east-1.amazonaws.com/id/EXAMPLE"`:              "irsa_oidc_provider_arn must be an IAM OIDC provider ARN",
		`queue_message_retention_seconds = 30`:                                                "queue_message_retention_seconds must be from 60",
		`rule_name_prefix = "a-rule-prefix-longer-than-thirty"`:                               "rule_name_prefix must be 1 to 30 letters",
		`interruption_handler_architecture = "amd64"`:                                         "interruption_handler_architecture must be arm64 or x86_64",
		`interruption_handler_log_retention_days = 10`:                                        "interruption_handler_log_retention_days must be one of",
		`node_pools = [{ name = "Web", requirement = [] }]`:                                   "node_pools[*].name must be NodePool names",
		`node_pools = [{ name = "web", requirement = [{ key = "k", operator = "Equals" }] }]`: "node_pools[*].requirement[*].operator must be In, NotIn",
		`instance_types = ["large"]`:                                                          "instance_types must be instance type names",
		`node_iam_role_additional_policies = { ssm = "AmazonSSM" }`:                           "node_iam_role_additional_policies must map names to managed policy ARNs",
		`controller = { replicas = 0 }`:                                                       "controller.replicas must be from 1 to 10",
		`controller = { log_level = "loud" }`:                                                 "controller.log_level must be trace, debug, info, warn or error",
		`iam_role_name = "a role"`:                                                            "iam_role_name must be an IAM role name",
		`cluster_name = "-bed"`:                                                               "cluster_name must be an EKS cluster name",
	})
	planBadCalls(t, e, map[string]string{
		`enable_irsa = true`: "Set exactly one of enable_pod_identity (the default) and enable_irsa",
		"enable_irsa = true\n  enable_pod_identity = false":              "enable_irsa needs irsa_oidc_provider_arn",
		`interruption_handler_subnet_ids = ["subnet-0a1b2c3d4e5f60001"]`: "interruption_handler_subnet_ids and interruption_handler_security_group_ids go together",
	})
}

// planBadCalls plans one call of the module per input (input -> the message
// it must fail with) and wants every message.
func planBadCalls(t *testing.T, e *env, calls map[string]string) {
	t.Helper()
	ca := e.Values()["cluster_ca"]
	var b strings.Builder
	b.WriteString("terraform {\n  required_providers {\n    stowage = { source = \"stowage-dev/stowage\" }\n  }\n}\n")
	b.WriteString("provider \"stowage\" {\n  aws_region = \"us-east-1\"\n}\n")
	i := 0
	for input := range calls {
		fmt.Fprintf(&b, "module \"bad%d\" {\n  source = \"./stowage\"\n  %s\n", i, input)
		defaults := map[string]string{"cluster_name": `"bed"`, "cluster_endpoint": `"https://bed.example.com"`, "cluster_certificate_authority_data": `"` + ca + `"`}
		for _, k := range slices.Sorted(maps.Keys(defaults)) {
			if !strings.HasPrefix(input, k+" ") {
				fmt.Fprintf(&b, "  %s = %s\n", k, defaults[k])
			}
		}
		b.WriteString("}\n")
		i++
	}
	dir := root(t, "stowage", b.String())
	e.tf.MustRun(t, dir, "init", "-input=false")
	out, err := e.tf.Run(dir, "plan", "-input=false")
	if err == nil {
		t.Fatalf("a plan with bad inputs succeeded:\n%s", out)
	}
	flat := tfcli.OneLine(out)
	for input, msg := range calls {
		if !strings.Contains(flat, msg) {
			t.Errorf("%s: no error says %q", input, msg)
		}
	}
	if t.Failed() {
		t.Logf("plan output:\n%s", out)
	}
}
