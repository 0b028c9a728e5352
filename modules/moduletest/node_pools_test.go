package moduletest_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	autoscalingcrd "github.com/stowage-dev/stowage/controller/apis/autoscaling/crd"
	autoscalingv1beta1 "github.com/stowage-dev/stowage/controller/apis/autoscaling/v1beta1"
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/tfcli"
)

// seedPools calls modules/node-pools as the seed's platform team would, every
// class on, and plans a peak with the module's outputs.
const seedPools = `
terraform {
  required_providers {
    stowage = { source = "stowage-dev/stowage" }
  }
}

provider "stowage" {}

module "pools" {
  source       = "./node-pools"
  cluster_name = "prod"
  node_role    = "StowageNodeRole-prod"
  zones        = ["us-east-1a", "us-east-1b", "us-east-1c"]
  tags         = { team = "platform" }
  gpu_inference = {
    min_nodes = 1
    headroom = {
      "vllm-headroom" = { namespace = "inference", workload = "vllm" }
    }
  }
  gpu_training = {
    enabled                   = true
    capacity_reservation_ids  = ["cr-0123456789abcdef0"]
    capacity_reservation_tags = { purpose = "training" }
    capacity_block_lead_time  = "90m"
  }
}

data "stowage_plan" "peak" {
  node_pools   = module.pools.node_pools
  node_classes = module.pools.node_classes
  pod {
    name          = "storefront"
    replicas      = 40
    requests      = { cpu = "1", memory = "2Gi" }
    node_selector = { tier = "web" }
  }
  pod {
    name          = "vllm"
    replicas      = 2
    requests      = { cpu = "8", memory = "64Gi", "nvidia.com/gpu" = "4" }
    node_selector = { tier = "inference" }
    toleration {
      key      = "nvidia.com/gpu"
      operator = "Exists"
      effect   = "NoSchedule"
    }
  }
}

output "pool_names" {
  value = module.pools.node_pool_names
}

output "buffers" {
  value = module.pools.capacity_buffer_names
}

# The pools as values, for the controller's policy.
data "stowage_controller_policy" "pools" {
  cluster_name   = "prod"
  region         = "us-east-1"
  node_role_arns = ["arn:aws:iam::123456789012:role/StowageNodeRole-prod"]
  node_pools     = module.pools.policy_node_pools
}

output "policy_pools" {
  value = module.pools.policy_node_pools
}

output "launchable" {
  value = data.stowage_controller_policy.pools.launchable_instance_types
}

output "peak_pools" {
  value = distinct([for n in data.stowage_plan.peak.nodes : n.node_pool])
}

output "unschedulable" {
  value = length(data.stowage_plan.peak.unschedulable)
}
`

// TestNodePoolsModuleAppliesPlansCleanAndDestroys applies modules/node-pools
// with every class on, checks the objects it writes against the seed's
// pattern, plans no change afterwards, and destroys everything.
func TestNodePoolsModuleAppliesPlansCleanAndDestroys(t *testing.T) {
	e := start(t)
	e.InstallCRDs(t, autoscalingcrd.MustCapacityBuffer())
	e.createNamespace(t, "inference")
	dir := root(t, "node-pools", seedPools)
	e.tf.MustRun(t, dir, "init", "-input=false")
	if out := e.tf.MustRun(t, dir, "validate"); !strings.Contains(out, "The configuration is valid") {
		t.Fatalf("terraform validate:\n%s", out)
	}
	if out, err := e.tf.Run("..", "fmt", "-check", "-recursive", "node-pools"); err != nil {
		t.Errorf("terraform fmt -check: files not formatted:\n%s", out)
	}
	plan := e.tf.MustRun(t, dir, "plan", "-input=false", "-out=tfplan")
	if !strings.Contains(plan, "Plan: 9 to add, 0 to change, 0 to destroy") {
		t.Fatalf("the first plan does not add 3 classes, 5 pools and a buffer:\n%s", plan)
	}
	e.tf.MustRun(t, dir, "apply", "-input=false", "tfplan")

	names := outputJSON[map[string][]string](t, e, dir, "pool_names")
	want := map[string][]string{"web": {"web-spot", "web-on-demand"}, "batch": {"batch-spot"}, "gpu_inference": {"gpu-inference"}, "gpu_training": {"gpu-training"}}
	for class, pools := range want {
		if !slices.Equal(names[class], pools) {
			t.Errorf("node_pool_names[%s] = %v, want %v", class, names[class], pools)
		}
	}
	if n := outputJSON[int](t, e, dir, "unschedulable"); n != 0 {
		t.Errorf("the peak planned on the module's pools leaves %d pods unschedulable", n)
	}
	if peak := outputJSON[[]string](t, e, dir, "peak_pools"); !slices.Contains(peak, "web-spot") || !slices.Contains(peak, "gpu-inference") {
		t.Errorf("the peak lands on pools %v; want web on web-spot and vLLM on gpu-inference", peak)
	}
	checkSeedPattern(t, e)
	checkPolicyPools(t, e, dir)
	checkHeadroom(t, e, dir)

	if again, err := e.tf.Run(dir, "plan", "-input=false", "-detailed-exitcode"); err != nil || !strings.Contains(again, "No changes") {
		t.Fatalf("a plan after apply is not empty (%v):\n%s", err, again)
	}
	e.tf.MustRun(t, dir, "destroy", "-input=false", "-auto-approve")
	for _, plural := range []string{"nodepools", "nodeclasses"} {
		if left := e.list(t, plural); len(left) > 0 {
			t.Errorf("%d %s left after destroy", len(left), plural)
		}
	}
	if _, err := e.dyn.Resource(capacityBuffers).Namespace("inference").Get(context.Background(), "vllm-headroom", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the CapacityBuffer is still there after destroy (%v)", err)
	}
}

var capacityBuffers = autoscalingv1beta1.SchemeGroupVersion.WithResource("capacitybuffers")

// checkHeadroom reads back the CapacityBuffer gpu_inference.headroom asks for:
// one replica of the vllm Deployment's shape.
func checkHeadroom(t *testing.T, e *env, dir string) {
	t.Helper()
	if names := outputJSON[[]string](t, e, dir, "buffers"); !slices.Equal(names, []string{"inference/vllm-headroom"}) {
		t.Errorf("capacity_buffer_names = %v, want [inference/vllm-headroom]", names)
	}
	b, err := e.dyn.Resource(capacityBuffers).Namespace("inference").Get(context.Background(), "vllm-headroom", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the CapacityBuffer: %v", err)
	}
	ref := nested[map[string]any](b, "spec", "scalableRef")
	if ref["apiGroup"] != "apps" || ref["kind"] != "Deployment" || ref["name"] != "vllm" || nested[int64](b, "spec", "replicas") != 1 {
		t.Errorf("the buffer's spec is %v, want one replica of apps/Deployment vllm", b.Object["spec"])
	}
}

// checkSeedPattern reads the applied objects back from the API server.
func checkSeedPattern(t *testing.T, e *env) {
	t.Helper()
	spot, onDemand := e.get(t, "nodepools", "web-spot"), e.get(t, "nodepools", "web-on-demand")
	if w1, w2 := nested[int64](spot, "spec", "weight"), nested[int64](onDemand, "spec", "weight"); w1 <= w2 {
		t.Errorf("web-spot weight %d, web-on-demand %d: spot must be tried first", w1, w2)
	}
	if got := requirementValues(spot, "stowage.dev/capacity-type"); !slices.Equal(got, []string{"spot"}) {
		t.Errorf("web-spot capacity types %v", got)
	}
	if got := requirementValues(onDemand, "stowage.dev/capacity-type"); !slices.Equal(got, []string{"on-demand"}) {
		t.Errorf("web-on-demand capacity types %v", got)
	}
	for _, name := range []string{"web-spot", "web-on-demand"} {
		if got := requirementValues(e.get(t, "nodepools", name), "stowage.dev/instance-cpu"); !slices.Equal(got, []string{"16"}) {
			t.Errorf("%s caps instance-cpu at %v; want 16 by default, as the seed's pools", name, got)
		}
	}
	gpu := e.get(t, "nodepools", "gpu-inference")
	if p := nested[string](gpu, "spec", "disruption", "consolidationPolicy"); p != "WhenEmpty" {
		t.Errorf("gpu-inference consolidationPolicy %q, want WhenEmpty", p)
	}
	if got := requirementValues(gpu, "node.kubernetes.io/instance-type"); len(got) < 3 {
		t.Errorf("gpu-inference instance types %v: want the three diversified types", got)
	}
	for _, name := range []string{"web-spot", "batch-spot", "gpu-inference", "gpu-training"} {
		budgets := nestedSlice(e.get(t, "nodepools", name), "spec", "disruption", "budgets")
		if !slices.ContainsFunc(budgets, func(b any) bool { return b.(map[string]any)["schedule"] == "0 9 * * 1-5" }) {
			t.Errorf("%s has no business-hours budget: %v", name, budgets)
		}
	}
	training := e.get(t, "nodepools", "gpu-training")
	if got := requirementValues(training, "stowage.dev/capacity-type"); !slices.Equal(got, []string{"reserved"}) {
		t.Errorf("gpu-training capacity types %v, want reserved", got)
	}
	if n := nested[int64](gpu, "spec", "minNodes"); n != 1 {
		t.Errorf("gpu-inference minNodes %d, want the module's min_nodes 1", n)
	}
	if lead := nested[string](training, "spec", "capacityBlockLeadTime"); lead != "1h30m0s" && lead != "90m" {
		t.Errorf("gpu-training capacityBlockLeadTime %q, want the module's 90m", lead)
	}
	if _, set := nested[map[string]any](e.get(t, "nodepools", "web-spot"), "spec")["minNodes"]; set {
		t.Error("web-spot has a minNodes: a pool without min_nodes has no floor")
	}
	terms := nestedSlice(e.get(t, "nodeclasses", "gpu-training"), "spec", "capacityReservationSelectorTerms")
	if len(terms) != 2 {
		t.Errorf("gpu-training's class selects reservations by %v; want the id and the tags", terms)
	}
}

// checkPolicyPools holds the policy_node_pools output, made from the
// inputs, against the pools the API server holds, and finds the GPU types in
// the policy it gives.
func checkPolicyPools(t *testing.T, e *env, dir string) {
	t.Helper()
	type requirement struct {
		Key      string   `json:"key"`
		Operator string   `json:"operator"`
		Values   []string `json:"values"`
	}
	pools := outputJSON[[]struct {
		Name        string        `json:"name"`
		Requirement []requirement `json:"requirement"`
	}](t, e, dir, "policy_pools")
	if len(pools) != 5 {
		t.Fatalf("policy_node_pools has %d pools, want the 5 the module made", len(pools))
	}
	for _, p := range pools {
		applied := nestedSlice(e.get(t, "nodepools", p.Name), "spec", "template", "spec", "requirements")
		if len(applied) != len(p.Requirement) {
			t.Errorf("pool %s: %d requirements applied, %d in policy_node_pools", p.Name, len(applied), len(p.Requirement))
			continue
		}
		for _, r := range p.Requirement {
			if got := requirementValues(e.get(t, "nodepools", p.Name), r.Key); !slices.Equal(got, r.Values) {
				t.Errorf("pool %s %s: applied %v, policy_node_pools %v", p.Name, r.Key, got, r.Values)
			}
		}
	}
	launchable := outputJSON[[]string](t, e, dir, "launchable")
	if !slices.Contains(launchable, "g6.12xlarge") && !slices.Contains(launchable, "g6.*") {
		t.Errorf("the policy made from policy_node_pools cannot launch g6.12xlarge: %v", launchable)
	}
}

// TestNodePoolsModuleRefusesBadInputs plans one module call per bad input and
// wants each validation's message, naming the input and the fix.
func TestNodePoolsModuleRefusesBadInputs(t *testing.T) {
	e := start(t)
	calls := map[string]string{
		`web = { spot_weight = 10, on_demand_weight = 10 }`:                                            "web.spot_weight must be above web.on_demand_weight",
		`web = { instance_families = ["c6i"] }`:                                                        "web.instance_families must list at least two families",
		`gpu_inference = { instance_types = ["g5.12xlarge"] }`:                                         "gpu_inference.instance_types must list at least two types",
		`gpu_training = { enabled = true }`:                                                            "gpu_training.enabled needs the reservations to launch into",
		`gpu_training = { capacity_reservation_ids = ["reservation-1"] }`:                              "gpu_training.capacity_reservation_ids must be reservation ids",
		`business_hours = { schedule = "9 to 5" }`:                                                     "business_hours.schedule must be a five-field cron expression",
		`business_hours = { duration = "all day" }`:                                                    "business_hours.duration must be a duration",
		`batch = { consolidation_policy = "WhenCheaper" }`:                                             "batch.consolidation_policy must be WhenEmpty, WhenEmptyOrUnderutilized or Balanced",
		`web = { return_after = "soon" }`:                                                              "web.return_after must be a duration such as 10m, or Never",
		`web = { consolidation_min_savings = "0.15" }`:                                                 "web.consolidation_min_savings must be a percentage",
		`web = { budget = "ten percent" }`:                                                             "web.budget and web.business_hours_budget must be node counts",
		`gpu_inference = { business_hours_reasons = ["Consolidation"] }`:                               "gpu_inference.business_hours_reasons must be among",
		`gpu_inference = { min_nodes = 1.5 }`:                                                          "gpu_inference.min_nodes must be a whole number of nodes",
		`gpu_inference = { headroom = { x = { namespace = "a", workload = "b", kind = "CronJob" } } }`: "gpu_inference.headroom entries must name a Deployment",
		`gpu_training = { capacity_block_lead_time = "an hour" }`:                                      "gpu_training.capacity_block_lead_time must be a duration",
		`zones = ["east"]`:       "zones must be availability zone names",
		`name_prefix = "Team_A"`: "name_prefix must be empty or up to 32 lower-case letters",
	}
	var b strings.Builder
	b.WriteString("terraform {\n  required_providers {\n    stowage = { source = \"stowage-dev/stowage\" }\n  }\n}\nprovider \"stowage\" {}\n")
	i := 0
	for input := range calls {
		b.WriteString("module \"bad" + string(rune('a'+i)) + "\" {\n  source = \"./node-pools\"\n  cluster_name = \"prod\"\n  node_role = \"StowageNodeRole-prod\"\n  " + input + "\n}\n")
		i++
	}
	dir := root(t, "node-pools", b.String())
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

func outputJSON[T any](t *testing.T, e *env, dir, name string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(e.tf.MustRun(t, dir, "output", "-json", name)), &v); err != nil {
		t.Fatalf("output %s: %v", name, err)
	}
	return v
}

func nested[T any](u *unstructured.Unstructured, fields ...string) T {
	v, _, _ := unstructured.NestedFieldNoCopy(u.Object, fields...)
	x, _ := v.(T)
	return x
}

func nestedSlice(u *unstructured.Unstructured, fields ...string) []any {
	return nested[[]any](u, fields...)
}

func requirementValues(pool *unstructured.Unstructured, key string) []string {
	for _, r := range nestedSlice(pool, "spec", "template", "spec", "requirements") {
		m := r.(map[string]any)
		if m["key"] == key {
			var out []string
			for _, v := range m["values"].([]any) {
				out = append(out, v.(string))
			}
			return out
		}
	}
	return nil
}

// TestNodePoolsModuleRefusesPoolsItDidNotMake: with its default name_prefix,
// the module's plan fails on a web-spot the cluster already has (made with
// kubectl), naming the import block; the pool is left as it was.
func TestNodePoolsModuleRefusesPoolsItDidNotMake(t *testing.T) {
	e := start(t)
	e.InstallCRDs(t)
	existing := &unstructured.Unstructured{Object: map[string]any{"apiVersion": v1alpha1.SchemeGroupVersion.String(), "kind": "NodePool",
		"metadata": map[string]any{"name": "web-spot"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"nodeClassRef": map[string]any{"name": "theirs"},
			"requirements": []any{map[string]any{"key": "stowage.dev/capacity-type", "operator": "In", "values": []any{"on-demand"}}}}}}}}
	res := e.dyn.Resource(v1alpha1.SchemeGroupVersion.WithResource("nodepools"))
	if _, err := res.Create(context.Background(), existing, metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"}); err != nil {
		t.Fatal(err)
	}
	dir := root(t, "node-pools", seedPools)
	e.tf.MustRun(t, dir, "init", "-input=false")
	out, err := e.tf.Run(dir, "plan", "-input=false")
	flat := tfcli.OneLine(out)
	if err == nil || !strings.Contains(flat, "NodePool web-spot already exists") || !strings.Contains(flat, `id = "web-spot"`) {
		t.Fatalf("the module's plan over an existing web-spot: err %v, want it refused naming the import block:\n%s", err, out)
	}
	if got := requirementValues(e.get(t, "nodepools", "web-spot"), "stowage.dev/capacity-type"); !slices.Equal(got, []string{"on-demand"}) {
		t.Errorf("the existing web-spot changed: capacity types %v", got)
	}
}
