package aws_test

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

func TestNodeClassResolution(t *testing.T) {
	cases := []struct {
		name        string
		mutate      func(e *env, nc *v1alpha1.NodeClass)
		fault       *awsemu.Fault
		wantReady   bool
		wantReason  string
		wantMessage string
		wantSubnets int
		wantAMIs    int
	}{
		{name: "al2023 alias resolves standard, arm64, nvidia and neuron images", wantReady: true, wantSubnets: 3, wantAMIs: 4},
		{name: "bottlerocket alias", mutate: func(_ *env, nc *v1alpha1.NodeClass) {
			nc.Spec.AMISelectorTerms = []v1alpha1.AMISelectorTerm{{Alias: "bottlerocket@latest"}}
		}, wantReady: true, wantSubnets: 3, wantAMIs: 3},
		{name: "subnet and image pinned by id", mutate: func(e *env, nc *v1alpha1.NodeClass) {
			nc.Spec.SubnetSelectorTerms = []v1alpha1.SelectorTerm{{ID: e.subnets[1]}}
			nc.Spec.AMISelectorTerms = []v1alpha1.AMISelectorTerm{{ID: firstImage(e)}}
		}, wantReady: true, wantSubnets: 1, wantAMIs: 1},
		{name: "security group by name", mutate: func(_ *env, nc *v1alpha1.NodeClass) {
			nc.Spec.SecurityGroupSelectorTerms = []v1alpha1.SecurityGroupSelectorTerm{{Name: cluster + "-nodes"}}
		}, wantReady: true, wantSubnets: 3, wantAMIs: 4},
		{name: "no subnet matches", mutate: func(_ *env, nc *v1alpha1.NodeClass) {
			nc.Spec.SubnetSelectorTerms = []v1alpha1.SelectorTerm{{Tags: map[string]string{"nothing": "here"}}}
		}, wantReason: "ResolutionFailed"},
		// As an administrator, whom IAM lets pass any role, a role that does not exist fails resolution.
		{name: "unknown role", mutate: func(e *env, nc *v1alpha1.NodeClass) {
			nc.Spec.Role = "NoSuchRole"
			e.cp = e.newProvider(e.clients)
		}, wantReason: "ResolutionFailed"},
		// The generated policy passes only the node role: another is refused, and the condition says which permission.
		{name: "a role the controller's policy does not pass", mutate: func(e *env, nc *v1alpha1.NodeClass) {
			nc.Spec.Role = "OtherRole"
			e.emu.AddRole("OtherRole")
			e.denialsExpected.Store(true)
		}, wantReason: "Unauthorized", wantMessage: "iam:PassRole"},
		{name: "missing permission is named", fault: &awsemu.Fault{Action: "DescribeSubnets", Kind: awsemu.FaultAccessDenied},
			wantReason: "Unauthorized", wantMessage: "ec2:DescribeSubnets"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, awsemu.SmallCatalogue(), 3)
			if tc.mutate != nil {
				tc.mutate(e, e.nc)
			}
			if tc.fault != nil {
				e.emu.Inject(*tc.fault)
			}
			st := e.cp.Status(ctx(t), e.nc)
			cond := st.Conditions[0]
			if (cond.Status == "True") != tc.wantReady || (tc.wantReason != "" && cond.Reason != tc.wantReason) {
				t.Fatalf("condition %+v, want ready=%v reason %q", cond, tc.wantReady, tc.wantReason)
			}
			if !contains(cond.Message, tc.wantMessage) {
				t.Errorf("message %q does not name %s", cond.Message, tc.wantMessage)
			}
			if len(st.Subnets) != tc.wantSubnets || len(st.AMIs) != tc.wantAMIs || (tc.wantReady && (len(st.SecurityGroups) != 1 || st.InstanceProfile == "")) {
				t.Errorf("status %d subnets, %d AMIs, %d groups, profile %q; want %d subnets, %d AMIs",
					len(st.Subnets), len(st.AMIs), len(st.SecurityGroups), st.InstanceProfile, tc.wantSubnets, tc.wantAMIs)
			}
			if tc.wantReady {
				if p, ok := e.emu.InstanceProfile(st.InstanceProfile); !ok || len(p.Roles) != 1 || p.Roles[0] != nodeRole {
					t.Errorf("instance profile %+v, want one holding %s", p, nodeRole)
				}
			}
		})
	}
}

func firstImage(e *env) string {
	for _, id := range e.images {
		return id
	}
	return ""
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestUserDataThatCannotBeReadMakesTheNodeClassNotReady: a Bottlerocket
// class whose userData is not TOML is not Ready, saying so; one that sets
// the cluster's name has that setting named as replaced.
func TestUserDataThatCannotBeReadMakesTheNodeClassNotReady(t *testing.T) {
	e := newEnv(t, awsemu.SmallCatalogue(), 1)
	nc := nodeClass("br", "bottlerocket@latest")
	nc.Spec.UserData = ptr.To("[settings.kubernetes]\ncluster-name = 'other'\nkube-api-qps = 30\n")
	if st := e.cp.Status(ctx(t), nc); st.Conditions[0].Status != "True" {
		t.Fatalf("status %+v, want Ready", st.Conditions)
	}
	if got, err := e.cp.ReplacedUserData(nc); err != nil || !slices.Equal(got, []string{"settings.kubernetes.cluster-name"}) {
		t.Errorf("replaced %q, %v; want the cluster name", got, err)
	}
	nc.Spec.UserData = ptr.To("[settings.kubernetes]\n[settings.kubernetes]\n")
	st := e.cp.Status(ctx(t), nc)
	if c := st.Conditions[0]; c.Status != "False" || c.Reason != "UserDataInvalid" || !strings.Contains(c.Message, "spec.userData is not TOML") {
		t.Errorf("condition %+v, want False UserDataInvalid naming spec.userData", c)
	}
}
