package clusterautoscaler_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/clusterautoscaler"
)

// examples holds the AWS CLI output of a cluster's node groups: two managed
// node groups (web on Bottlerocket, GPU inference tainted), the Auto Scaling
// group behind web, a self-managed spot group with a mixed-instances policy
// and CA's node-template tags, and a system group whose instance type is in
// its launch template.
const examples = "../../examples/cluster-autoscaler"

func read(t *testing.T, files ...string) ([]*clusterautoscaler.NodeGroup, error) {
	t.Helper()
	var in clusterautoscaler.Input
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if err := in.Read(filepath.Base(f), r); err != nil {
			return nil, err
		}
	}
	return in.NodeGroups()
}

func exampleFiles(t *testing.T) []string {
	files, err := filepath.Glob(examples + "/*.json")
	if err != nil || len(files) != 4 {
		t.Fatalf("want the 4 example files: %v %v", files, err)
	}
	return files
}

func TestNodeGroupsFromTheCLIOutput(t *testing.T) {
	groups, err := read(t, exampleFiles(t)...)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*clusterautoscaler.NodeGroup{}
	for _, g := range groups {
		byName[g.Name] = g
	}
	if len(groups) != 4 {
		t.Fatalf("want web, gpu-inference, batch-spot and system (web's Auto Scaling group merged into it), got %d: %v", len(groups), byName)
	}
	web := byName["web"]
	if web == nil || !slices.Equal(web.Zones, []string{"us-east-1a", "us-east-1b", "us-east-1c"}) || web.AMIFamily != "bottlerocket" || web.NodeRole != "prod-eks-node" {
		t.Errorf("web: %+v; want the zones of its Auto Scaling group, Bottlerocket and the role's name", web)
	}
	batch := byName["batch-spot"]
	if batch == nil || !slices.Equal(batch.InstanceTypes, []string{"m6i.4xlarge", "m7i.4xlarge"}) || !slices.Equal(batch.CapacityTypes, []string{"spot"}) ||
		batch.Labels["tier"] != "batch" || len(batch.Taints) != 1 || batch.Taints[0].ToString() != "workload=batch:NoSchedule" || batch.Cluster != "prod" {
		t.Errorf("batch-spot: %+v; want the overrides, spot (0 %% on-demand), and the label and taint of its CA tags", batch)
	}
	system := byName["system"]
	if system == nil || !slices.Equal(system.InstanceTypes, []string{"m6i.large"}) || system.Taints[0].ToString() != "CriticalAddonsOnly:NoSchedule" {
		t.Errorf("system: %+v; want m6i.large from launch template version 4, and the empty-valued taint", system)
	}
	gpu := byName["gpu-inference"]
	if gpu == nil || gpu.Taints[0].ToString() != "nvidia.com/gpu=true:NoSchedule" || gpu.MinSize != 0 || gpu.MaxSize != 8 {
		t.Errorf("gpu-inference: %+v", gpu)
	}
}

func TestProposalCoversEachClassWithDiversifiedTypes(t *testing.T) {
	groups, err := read(t, exampleFiles(t)...)
	if err != nil {
		t.Fatal(err)
	}
	p, err := clusterautoscaler.Propose(groups, clusterautoscaler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		types, capacity []string
		class           string
	}{
		"web":           {[]string{"c6i.2xlarge", "c6i.4xlarge", "c7i.2xlarge"}, []string{"on-demand"}, "bottlerocket"},
		"gpu-inference": {[]string{"g5.12xlarge", "g5.24xlarge", "g6.12xlarge"}, []string{"on-demand"}, "al2023"},
		"batch-spot":    {[]string{"m6i.4xlarge", "m7i.4xlarge", "m6i.8xlarge", "m7i.8xlarge"}, []string{"spot"}, "al2023"},
		"system":        {[]string{"m6i.large", "m6i.xlarge", "m7i.large"}, []string{"on-demand"}, "al2023"},
	}
	if len(p.NodePools) != len(want) || len(p.NodeClasses) != 2 {
		t.Fatalf("%d pools and %d classes, want %d and 2", len(p.NodePools), len(p.NodeClasses), len(want))
	}
	for _, np := range p.NodePools {
		w, ok := want[np.Name]
		if !ok {
			t.Errorf("unexpected pool %s", np.Name)
			continue
		}
		if got := values(np, "node.kubernetes.io/instance-type"); !slices.Equal(got, w.types) {
			t.Errorf("%s types %v, want %v", np.Name, got, w.types)
		}
		if got := values(np, v1alpha1.LabelCapacityType); !slices.Equal(got, w.capacity) {
			t.Errorf("%s capacity %v, want %v", np.Name, got, w.capacity)
		}
		if np.Spec.Template.Spec.NodeClassRef.Name != w.class {
			t.Errorf("%s class %s, want %s", np.Name, np.Spec.Template.Spec.NodeClassRef.Name, w.class)
		}
	}
	gpu := p.NodePools[slices.IndexFunc(p.NodePools, func(np *v1alpha1.NodePool) bool { return np.Name == "gpu-inference" })]
	if gpu.Spec.Disruption.ConsolidationPolicy != v1alpha1.ConsolidationPolicyWhenEmpty || gpu.Spec.Limits.Name("nvidia.com/gpu", "").Value() != 32 {
		t.Errorf("gpu-inference: %+v; want WhenEmpty and 8 nodes x 4 GPUs", gpu.Spec)
	}
	if role := p.NodeClasses[0].Spec.Role; role != "prod-eks-node" {
		t.Errorf("node role %q", role)
	}
}

func values(np *v1alpha1.NodePool, key string) []string {
	for _, r := range np.Spec.Template.Spec.Requirements {
		if r.Key == key {
			return r.Values
		}
	}
	return nil
}

func TestSpotAndOnDemandGroupsOfOneClassBecomeWeightedPools(t *testing.T) {
	dir := t.TempDir()
	doc := func(name, capacity string) string {
		return `{"nodegroup": {"nodegroupName": "` + name + `", "clusterName": "prod", "capacityType": "` + capacity + `",
		  "scalingConfig": {"minSize": 0, "maxSize": 10, "desiredSize": 1}, "instanceTypes": ["m6i.xlarge"],
		  "amiType": "AL2023_x86_64_STANDARD", "nodeRole": "arn:aws:iam::1:role/node", "labels": {"tier": "web"}}}`
	}
	f := filepath.Join(dir, "groups.json")
	if err := os.WriteFile(f, []byte(doc("web-spot", "SPOT")+"\n"+doc("web-od", "ON_DEMAND")), 0o600); err != nil {
		t.Fatal(err)
	}
	groups, err := read(t, f)
	if err != nil {
		t.Fatal(err)
	}
	p, err := clusterautoscaler.Propose(groups, clusterautoscaler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.NodePools) != 2 || *p.NodePools[0].Spec.Weight != 100 || *p.NodePools[1].Spec.Weight != 10 ||
		values(p.NodePools[0], v1alpha1.LabelCapacityType)[0] != "spot" || p.NodePools[0].Name != "web-spot" || p.NodePools[1].Name != "web-spot-on-demand" {
		t.Errorf("want web-spot (spot, weight 100) and web-spot-on-demand (weight 10), got %d pools: %+v", len(p.NodePools), p.NodePools)
	}
}

func TestDiversify(t *testing.T) {
	infos := catalogue.Builtin()
	for _, tc := range []struct {
		in   []string
		max  int
		want []string
	}{
		{[]string{"c6i.2xlarge"}, 8, []string{"c6i.2xlarge", "c6i.4xlarge", "c7i.2xlarge"}},
		{[]string{"g5.12xlarge"}, 8, []string{"g5.12xlarge", "g5.24xlarge", "g6.12xlarge"}},
		{[]string{"g5.12xlarge"}, 2, []string{"g5.12xlarge", "g5.24xlarge"}},
		{[]string{"m7g.xlarge"}, 8, []string{"m7g.xlarge", "m7g.2xlarge", "m6g.xlarge"}},
		{[]string{"x9.mega"}, 8, []string{"x9.mega"}},
	} {
		got, unknown := clusterautoscaler.Diversify(tc.in, infos, tc.max)
		if !slices.Equal(got, tc.want) {
			t.Errorf("Diversify(%v, %d) = %v, want %v", tc.in, tc.max, got, tc.want)
		}
		if tc.in[0] == "x9.mega" && !slices.Equal(unknown, tc.in) {
			t.Errorf("unknown %v", unknown)
		}
	}
}

// TestBadInputNamesTheFix feeds inputs that cannot be read or proposed from,
// and wants each error to name what is wrong and what to do.
func TestBadInputNamesTheFix(t *testing.T) {
	asg := func(body string) string {
		return `{"AutoScalingGroups": [{"AutoScalingGroupName": "g", "MinSize": 0, "MaxSize": 3, ` + body + `}]}`
	}
	for _, tc := range []struct{ name, in, want string }{
		{"not CLI output", `{"Reservations": []}`, "not the output of aws eks describe-nodegroup"},
		{"empty", ``, "no JSON document"},
		{"wrong type", asg(`"DesiredCapacity": "two"`), "field AutoScalingGroups.DesiredCapacity: string is not a int"},
		{"type in the launch template", asg(`"LaunchTemplate": {"LaunchTemplateId": "lt-1", "Version": "3"}`), "add the output of `aws ec2 describe-launch-template-versions --launch-template-id lt-1`"},
		{"launch configuration", asg(`"LaunchConfigurationName": "old"`), "launch configurations are retired"},
		{"bad taint tag", asg(`"MixedInstancesPolicy": {"LaunchTemplate": {"Overrides": [{"InstanceType": "m6i.large"}]}}, "Tags": [{"Key": "k8s.io/cluster-autoscaler/node-template/taint/dedicated", "Value": "gpu"}]`), `"gpu" is not value:Effect`},
		{"bad sizes", `{"nodegroup": {"nodegroupName": "n", "instanceTypes": ["m6i.large"], "scalingConfig": {"minSize": 3, "maxSize": 1}}}`, "sizes min 3, max 1"},
		{"bad EKS taint", `{"nodegroup": {"nodegroupName": "n", "taints": [{"key": "a", "effect": "NoSchedule"}]}}`, `effect "NoSchedule" is not NO_SCHEDULE`},
		{"no cluster or role", asg(`"MixedInstancesPolicy": {"LaunchTemplate": {"Overrides": [{"InstanceType": "m6i.large"}]}}`), "pass --cluster-name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "in.json")
			if err := os.WriteFile(f, []byte(tc.in), 0o600); err != nil {
				t.Fatal(err)
			}
			groups, err := read(t, f)
			if err == nil {
				_, err = clusterautoscaler.Propose(groups, clusterautoscaler.Options{})
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v; want one saying %q", err, tc.want)
			}
		})
	}
}
