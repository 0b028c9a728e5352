package iampolicy_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/iampolicy"
	"github.com/stowage-dev/stowage/controller/aws/sdk"
	"github.com/stowage-dev/stowage/controller/catalogue"
)

func seedConfig() iampolicy.ControllerConfig {
	return iampolicy.ControllerConfig{Region: "us-east-1", AccountID: "111122223333", Cluster: "prod",
		NodeRoleARNs:  []string{"arn:aws:iam::111122223333:role/StowageNodeRole-prod"},
		NodePools:     []string{"web-spot", "web-on-demand", "gpu-inference"},
		InstanceTypes: []string{"c6i.large", "c6i.xlarge", "m6i.large", "g5.12xlarge", "g5.24xlarge", "g6.12xlarge"}}
}

// readOnly are the action verbs that change nothing.
func readOnly(action string) bool {
	_, verb, _ := strings.Cut(action, ":")
	for _, p := range []string{"Describe", "Get", "List"} {
		if strings.HasPrefix(verb, p) {
			return true
		}
	}
	return false
}

func policies(t *testing.T) map[string]iampolicy.Document {
	t.Helper()
	out := map[string]iampolicy.Document{}
	for name, cfg := range map[string]iampolicy.ControllerConfig{"seed": seedConfig(), "any pool, any type": {Region: "eu-west-1",
		AccountID: "111122223333", Cluster: "c", NodeRoleARNs: []string{"arn:aws:iam::111122223333:role/n"}}} {
		d, err := iampolicy.Controller(cfg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = d
	}
	lambda, err := iampolicy.Lambda(iampolicy.LambdaConfig{Region: "us-east-1", AccountID: "111122223333",
		QueueARN: "arn:aws:sqs:us-east-1:111122223333:prod-interruptions", LogGroup: "/aws/lambda/prod-interruptions",
		SubnetIDs: []string{"subnet-1"}, SecurityGroupIDs: []string{"sg-1"}})
	if err != nil {
		t.Fatal(err)
	}
	out["lambda in a VPC"] = lambda
	return out
}

func TestNoMutatingActionOnEveryResourceWithoutACondition(t *testing.T) {
	for name, d := range policies(t) {
		for _, s := range d.Statement {
			if !slices.Contains(s.Resource, "*") || len(s.Condition) > 0 {
				continue
			}
			for _, a := range s.Action {
				if !readOnly(a) {
					t.Errorf("%s: statement %s grants %s on * without a condition", name, s.Sid, a)
				}
			}
		}
	}
}

func TestPassRoleIsNeverOnEveryRoleAndOnlyToEC2(t *testing.T) {
	for name, d := range policies(t) {
		for _, s := range d.Statement {
			if !slices.ContainsFunc(s.Action, func(a string) bool { return a == "iam:PassRole" || a == "iam:*" || a == "*" }) {
				continue
			}
			for _, r := range s.Resource {
				if strings.ContainsAny(r, "*?") {
					t.Errorf("%s: PassRole on %q", name, r)
				}
			}
			if got := s.Condition["StringEquals"]["iam:PassedToService"]; !slices.Equal(got, []string{"ec2.amazonaws.com"}) {
				t.Errorf("%s: PassRole to %v, want ec2.amazonaws.com only", name, got)
			}
		}
	}
}

func TestTheControllerPolicyGrantsExactlyTheAWSLayersPermissions(t *testing.T) {
	var want []string
	for _, p := range sdk.Permissions {
		want = append(want, p.Action)
	}
	slices.Sort(want)
	for name, d := range policies(t) {
		if strings.HasPrefix(name, "lambda") {
			continue
		}
		if got := d.Actions(); !slices.Equal(got, want) {
			t.Errorf("%s grants %v, want %v", name, got, want)
		}
		region := map[string]string{"seed": "us-east-1", "any pool, any type": "eu-west-1"}[name]
		for _, s := range d.Statement {
			for _, r := range s.Resource {
				if (strings.Contains(r, ":ec2:") || strings.Contains(r, ":ssm:")) && !strings.Contains(r, ":"+region+":") {
					t.Errorf("%s: %s is not pinned to the region %s", name, r, region)
				}
			}
		}
	}
}

func TestInstanceTypesAndPoolsScopeTheLaunch(t *testing.T) {
	d, err := iampolicy.Controller(seedConfig())
	if err != nil {
		t.Fatal(err)
	}
	s := statement(t, d, "LaunchThePoolsInstanceTypes")
	if got := s.Condition["StringEquals"]["ec2:InstanceType"]; !slices.Equal(got, []string{"c6i.large", "c6i.xlarge", "g5.12xlarge", "g5.24xlarge", "g6.12xlarge", "m6i.large"}) {
		t.Errorf("instance types %v", got)
	}
	if got := s.Condition["StringEquals"]["aws:RequestTag/stowage.dev/nodepool"]; !slices.Equal(got, []string{"gpu-inference", "web-on-demand", "web-spot"}) {
		t.Errorf("pools %v", got)
	}
	if got := s.Condition["StringEquals"]["aws:RequestTag/kubernetes.io/cluster/prod"]; !slices.Equal(got, []string{"owned"}) {
		t.Errorf("cluster tag %v", got)
	}
	// Thousands of types: families, the same launches in fewer characters.
	many := seedConfig()
	many.InstanceTypes = nil
	for f := range 40 {
		for _, size := range []string{"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge", "metal"} {
			many.InstanceTypes = append(many.InstanceTypes, fmt.Sprintf("x%dgd.%s", f, size))
		}
	}
	d, err = iampolicy.Controller(many)
	if err != nil {
		t.Fatal(err)
	}
	s = statement(t, d, "LaunchThePoolsInstanceTypes")
	if got := s.Condition["StringLike"]["ec2:InstanceType"]; len(got) != 40 || got[0] != "x0gd.*" || d.Size() > iampolicy.InlineQuota {
		t.Errorf("400 types gave %d patterns (%v...) in %d characters; want the 40 families within %d", len(got), got[:1], d.Size(), iampolicy.InlineQuota)
	}
	many.MaxSize = 3000
	if _, err := iampolicy.Controller(many); err == nil || !strings.Contains(err.Error(), "instance_types") {
		t.Errorf("a quota no family list fits: %v, want an error naming instance_types", err)
	}
}

func TestBadConfigurationNamesTheField(t *testing.T) {
	cfg := iampolicy.ControllerConfig{Region: "mars-1", AccountID: "12", Cluster: "prod",
		NodeRoleARNs: []string{"arn:aws:iam::111122223333:role/*"}, NodePools: []string{"Web_Spot"}, InstanceTypes: []string{"huge"}}
	_, err := iampolicy.Controller(cfg)
	for _, field := range []string{"region", "account_id", "node_role_arns[0]", "node_pools[0]", "instance_types[0]"} {
		if err == nil || !strings.Contains(err.Error(), field+":") {
			t.Errorf("error %v does not name %s", err, field)
		}
	}
	_, err = iampolicy.Lambda(iampolicy.LambdaConfig{Region: "us-east-1", AccountID: "111122223333", QueueARN: "arn:aws:sqs:us-east-1:111122223333:*",
		LogGroup: "/aws/lambda/x", SubnetIDs: []string{"subnet-1"}})
	if err == nil || !strings.Contains(err.Error(), "queue_arn") || !strings.Contains(err.Error(), "security_group_ids") {
		t.Errorf("lambda error %v, want queue_arn and the VPC settings named", err)
	}
}

func TestTheLambdaMayReadItsQueueAndWriteItsLogsAndNothingElse(t *testing.T) {
	d, err := iampolicy.Lambda(iampolicy.LambdaConfig{Region: "us-east-1", AccountID: "111122223333",
		QueueARN: "arn:aws:sqs:us-east-1:111122223333:q", LogGroup: "/aws/lambda/fn"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"logs:CreateLogStream", "logs:PutLogEvents", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"}
	if got := d.Actions(); !slices.Equal(got, want) {
		t.Errorf("actions %v, want %v", got, want)
	}
	if s := statement(t, d, "ReadTheInterruptionQueue"); !slices.Equal(s.Resource, []string{"arn:aws:sqs:us-east-1:111122223333:q"}) {
		t.Errorf("queue statement on %v", s.Resource)
	}
	if s := statement(t, d, "WriteItsLogs"); !slices.Equal(s.Resource, []string{"arn:aws:logs:us-east-1:111122223333:log-group:/aws/lambda/fn:*"}) {
		t.Errorf("logs statement on %v", s.Resource)
	}
	var back map[string]any
	if err := json.Unmarshal([]byte(d.JSON()), &back); err != nil || back["Version"] != "2012-10-17" {
		t.Errorf("JSON %s: %v", d.JSON(), err)
	}
}

func statement(t *testing.T, d iampolicy.Document, sid string) iampolicy.Statement {
	t.Helper()
	for _, s := range d.Statement {
		if s.Sid == sid {
			return s
		}
	}
	t.Fatalf("no statement %s", sid)
	return iampolicy.Statement{}
}

// TestPoolInstanceTypes lists the catalogue's types a pool allows, by name
// or by family, and those of a pool on reservations alone.
func TestPoolInstanceTypes(t *testing.T) {
	all := catalogue.InstanceTypes(catalogue.Builtin(), catalogue.DefaultOptions())
	pool := func(reqs ...v1alpha1.NodeSelectorRequirementWithMinValues) *v1alpha1.NodePool {
		np := &v1alpha1.NodePool{}
		np.Spec.Template.Spec.Requirements = reqs
		return np
	}
	req := func(key string, values ...string) v1alpha1.NodeSelectorRequirementWithMinValues {
		return v1alpha1.NodeSelectorRequirementWithMinValues{Key: key, Operator: "In", Values: values}
	}
	for _, tc := range []struct {
		name string
		pool *v1alpha1.NodePool
		want []string
	}{
		{"by name", pool(req(corev1.LabelInstanceTypeStable, "g6.12xlarge", "g5.12xlarge"), req(v1alpha1.LabelCapacityType, "on-demand")),
			[]string{"g5.12xlarge", "g6.12xlarge"}},
		{"on reservations alone", pool(req(corev1.LabelInstanceTypeStable, "p5.48xlarge"), req(v1alpha1.LabelCapacityType, "reserved")),
			[]string{"p5.48xlarge"}},
		{"by family and size", pool(req(v1alpha1.LabelInstanceFamily, "m6i"), req(v1alpha1.LabelInstanceSize, "large", "xlarge")),
			[]string{"m6i.large", "m6i.xlarge"}},
		{"nothing", pool(req(corev1.LabelInstanceTypeStable, "m6i.huge")), nil},
	} {
		got := iampolicy.PoolInstanceTypes(tc.pool, all)
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
