package provider_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// podShape is one workload shape, written both as a stowage_plan pod block
// and as the pods `stowage schedule` reads.
type podShape struct {
	name, requests, nodeSelector, toleration string
	replicas                                 int
	spread                                   bool
}

var spikeShapes = []podShape{
	{name: "web", replicas: 30, requests: `cpu: "1", memory: 2Gi`, nodeSelector: "tier: web", spread: true},
	{name: "vllm", replicas: 3, requests: `cpu: "8", memory: 64Gi, nvidia.com/gpu: "4"`, nodeSelector: "tier: inference",
		toleration: "dedicated=gpu:NoSchedule"},
	{name: "batch-giant", replicas: 1, requests: `cpu: "500", memory: 1Ti`},
}

func (s podShape) hcl() string {
	var b strings.Builder
	fmt.Fprintf(&b, "  pod {\n    name = %q\n    replicas = %d\n    requests = { %s }\n", s.name, s.replicas, hclMap(s.requests))
	if s.nodeSelector != "" {
		fmt.Fprintf(&b, "    node_selector = { %s }\n", hclMap(s.nodeSelector))
	}
	if s.toleration != "" {
		kv, effect, _ := strings.Cut(s.toleration, ":")
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&b, "    toleration {\n      key = %q\n      value = %q\n      effect = %q\n    }\n", k, v, effect)
	}
	if s.spread {
		b.WriteString("    topology_spread {\n      topology_key = \"topology.kubernetes.io/zone\"\n    }\n")
	}
	b.WriteString("  }\n")
	return b.String()
}

// hclMap turns `a: "1", b: 2Gi` into `"a" = "1", "b" = "2Gi"`.
func hclMap(yamlish string) string {
	var out []string
	for _, kv := range strings.Split(yamlish, ", ") {
		k, v, _ := strings.Cut(kv, ": ")
		out = append(out, fmt.Sprintf("%q = %q", k, strings.Trim(v, `"`)))
	}
	return strings.Join(out, ", ")
}

func (s podShape) yaml() string {
	var b strings.Builder
	for i := range s.replicas {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s-%d, namespace: default, labels: {app: %s}}\nspec:\n", s.name, i, s.name)
		if s.nodeSelector != "" {
			fmt.Fprintf(&b, "  nodeSelector: {%s}\n", s.nodeSelector)
		}
		if s.toleration != "" {
			kv, effect, _ := strings.Cut(s.toleration, ":")
			k, v, _ := strings.Cut(kv, "=")
			fmt.Fprintf(&b, "  tolerations: [{key: %s, operator: Equal, value: %s, effect: %s}]\n", k, v, effect)
		}
		if s.spread {
			fmt.Fprintf(&b, "  topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: %s}}}]\n", s.name)
		}
		fmt.Fprintf(&b, "  containers: [{name: main, resources: {requests: {%s}}}]\n", s.requests)
	}
	return b.String()
}

// spikePlan passes the resources through locals: Terraform defers a data
// source that references a managed resource with pending changes to apply,
// but not one that reads their (known) planned values through a local.
const spikePlan = `
locals {
  pools   = [stowage_node_pool.web_spot, stowage_node_pool.web_on_demand, stowage_node_pool.gpu_inference]
  classes = [stowage_node_class.web, stowage_node_class.gpu]
}

data "stowage_plan" "spike" {
  node_pools   = local.pools
  node_classes = local.classes
  unavailable  = ["g5.12xlarge:us-east-1a"]
%s}

output "cost_per_hour" {
  value = data.stowage_plan.spike.cost_per_hour
}
`

// TestPlanMatchesStowageSchedule applies the seed's pools, reads stowage_plan
// on them during the plan (its output is known before apply), and checks that
// it makes the decision `stowage schedule` makes on the same pools and pods.
func TestPlanMatchesStowageSchedule(t *testing.T) {
	pools, err := os.ReadFile("testdata/plan/pools.tf")
	if err != nil {
		t.Fatal(err)
	}
	var blocks, docs strings.Builder
	for _, s := range spikeShapes {
		blocks.WriteString(s.hcl())
		docs.WriteString(s.yaml())
	}
	want := scheduleDecision(t, docs.String())
	config := string(pools) + fmt.Sprintf(spikePlan, blocks.String())
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		Steps: []resource.TestStep{{
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectKnownOutputValue("cost_per_hour", knownvalue.Float64Func(func(v float64) error {
					if math.Abs(v-want.cost) > 0.0001 {
						return fmt.Errorf("planned cost %.4f, stowage schedule says %.4f", v, want.cost)
					}
					return nil
				})),
			}},
			Check: func(s *terraform.State) error {
				got, err := planDecision(s)
				if err != nil {
					return err
				}
				return want.equal(got)
			},
		}},
	})
}

// decision is the comparable part of a schedule: node groups and unschedulable pods.
type decision struct {
	groups        []string // "pool type zone capacity-type xN"
	unschedulable []string // "namespace/name: reason"
	cost          float64
}

func (d decision) equal(o decision) error {
	if !slices.Equal(d.groups, o.groups) {
		return fmt.Errorf("nodes:\n stowage schedule: %v\n stowage_plan:      %v", d.groups, o.groups)
	}
	if !slices.Equal(d.unschedulable, o.unschedulable) {
		return fmt.Errorf("unschedulable:\n stowage schedule: %v\n stowage_plan:      %v", d.unschedulable, o.unschedulable)
	}
	if len(d.groups) == 0 || len(d.unschedulable) == 0 {
		return fmt.Errorf("the workload should launch nodes and leave a pod unschedulable: %+v", d)
	}
	return nil
}

func scheduleDecision(t *testing.T, pods string) decision {
	pools, err := os.ReadFile("testdata/plan/pools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(t.TempDir(), "snapshot.yaml")
	if err := os.WriteFile(snap, append(pools, pods...), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(stowageBinary(t), "schedule", "--snapshot", snap, "--json", "--unavailable", "g5.12xlarge:us-east-1a").Output()
	if err != nil {
		t.Fatalf("stowage schedule: %v", err)
	}
	var j struct {
		NodeClaims []struct {
			NodePool, Zone, CapacityType string
			InstanceTypes                []string
		}
		Unschedulable []struct{ Pod, Reason string }
		Totals        struct{ PricePerHour float64 }
	}
	if err := json.Unmarshal(out, &j); err != nil {
		t.Fatalf("reading stowage schedule --json: %v", err)
	}
	counts := map[string]int{}
	for _, nc := range j.NodeClaims {
		counts[strings.Join([]string{nc.NodePool, nc.InstanceTypes[0], nc.Zone, nc.CapacityType}, " ")]++
	}
	d := decision{cost: j.Totals.PricePerHour}
	for k, n := range counts {
		d.groups = append(d.groups, fmt.Sprintf("%s x%d", k, n))
	}
	for _, u := range j.Unschedulable {
		d.unschedulable = append(d.unschedulable, u.Pod+": "+u.Reason)
	}
	slices.Sort(d.groups)
	return d
}

func planDecision(s *terraform.State) (decision, error) {
	rs, ok := s.RootModule().Resources["data.stowage_plan.spike"]
	if !ok {
		return decision{}, fmt.Errorf("no data.stowage_plan.spike in state")
	}
	a := rs.Primary.Attributes
	var d decision
	n, _ := strconv.Atoi(a["nodes.#"])
	for i := range n {
		p := fmt.Sprintf("nodes.%d.", i)
		d.groups = append(d.groups, fmt.Sprintf("%s %s %s %s x%s", a[p+"node_pool"], a[p+"instance_type"], a[p+"zone"], a[p+"capacity_type"], a[p+"count"]))
	}
	u, _ := strconv.Atoi(a["unschedulable.#"])
	for i := range u {
		d.unschedulable = append(d.unschedulable, a[fmt.Sprintf("unschedulable.%d.pod", i)]+": "+a[fmt.Sprintf("unschedulable.%d.reason", i)])
	}
	d.cost, _ = strconv.ParseFloat(a["cost_per_hour"], 64)
	slices.Sort(d.groups)
	return d, nil
}

// stowageBinary builds the stowage command once per test binary.
func stowageBinary(t *testing.T) string {
	t.Helper()
	stowageOnce.Do(func() {
		dir, err := os.MkdirTemp("", "stowage-bin-")
		if err != nil {
			stowageErr = err
			return
		}
		stowagePath = filepath.Join(dir, "stowage")
		cmd := exec.Command("go", "build", "-o", stowagePath, "github.com/stowage-dev/stowage/controller/cmd/stowage")
		if out, err := cmd.CombinedOutput(); err != nil {
			stowageErr = fmt.Errorf("building stowage: %v\n%s", err, out)
		}
	})
	if stowageErr != nil {
		t.Fatal(stowageErr)
	}
	return stowagePath
}
