package awsemu

import (
	"strings"
	"testing"
)

// TestConditionOperatorsFollowIAMsRules checks each operator family on
// present, absent and multi-valued keys, as IAM's documentation of condition
// operators describes them.
func TestConditionOperatorsFollowIAMsRules(t *testing.T) {
	ctx := map[string][]string{
		"aws:requestedregion": {"us-east-1"}, "ec2:instancetype": {"m6i.large"}, "aws:tagkeys": {"Name", "stowage.dev/nodepool"},
		"aws:securetransport": {"false"}, "aws:epochtime": {"1700000000"}, "aws:sourceip": {"10.1.2.3"},
		"aws:principalarn": {"arn:aws:iam::123456789012:role/stowage"},
	}
	cases := []struct {
		op, key string
		values  []string
		want    bool
	}{
		{"StringEquals", "aws:RequestedRegion", []string{"us-east-1"}, true},
		{"StringEquals", "aws:RequestedRegion", []string{"eu-west-1", "us-east-1"}, true}, // values are alternatives
		{"StringEquals", "aws:RequestedRegion", []string{"US-EAST-1"}, false},             // case-sensitive
		{"StringEqualsIgnoreCase", "aws:RequestedRegion", []string{"US-EAST-1"}, true},
		{"StringNotEquals", "aws:RequestedRegion", []string{"eu-west-1"}, true},
		{"StringNotEquals", "aws:RequestedRegion", []string{"eu-west-1", "us-east-1"}, false},
		{"StringLike", "ec2:InstanceType", []string{"m6i.*"}, true},
		{"StringLike", "ec2:InstanceType", []string{"c6i.*", "g?.*"}, false},
		{"StringNotLike", "ec2:InstanceType", []string{"g*"}, true},
		// A key absent from the context fails a positive operator and passes a negated one.
		{"StringEquals", "aws:RequestTag/team", []string{"web"}, false},
		{"StringNotEquals", "aws:RequestTag/team", []string{"web"}, true},
		{"StringEqualsIfExists", "aws:RequestTag/team", []string{"web"}, true},
		{"StringEqualsIfExists", "ec2:InstanceType", []string{"c6i.large"}, false},
		{"Null", "aws:RequestTag/team", []string{"true"}, true},
		{"Null", "ec2:InstanceType", []string{"true"}, false},
		{"Null", "ec2:InstanceType", []string{"false"}, true},
		// Sets: ForAllValues holds when every value matches (and when there are none); ForAnyValue when one does.
		{"ForAllValues:StringEquals", "aws:TagKeys", []string{"Name", "stowage.dev/nodepool", "other"}, true},
		{"ForAllValues:StringEquals", "aws:TagKeys", []string{"Name"}, false},
		{"ForAllValues:StringEquals", "aws:RequestTag/absent", []string{"x"}, true},
		{"ForAnyValue:StringEquals", "aws:TagKeys", []string{"Name"}, true},
		{"ForAnyValue:StringEquals", "aws:RequestTag/absent", []string{"x"}, false},
		{"ForAllValues:StringNotEquals", "aws:TagKeys", []string{"secret"}, true},
		{"ForAnyValue:StringNotEquals", "aws:TagKeys", []string{"Name"}, true},
		{"Bool", "aws:SecureTransport", []string{"false"}, true},
		{"Bool", "aws:SecureTransport", []string{"true"}, false},
		{"NumericLessThan", "aws:EpochTime", []string{"1800000000"}, true},
		{"NumericGreaterThanEquals", "aws:EpochTime", []string{"1800000000"}, false},
		{"DateLessThan", "aws:EpochTime", []string{"2030-01-01T00:00:00Z"}, true},
		{"IpAddress", "aws:SourceIp", []string{"10.0.0.0/8"}, true},
		{"NotIpAddress", "aws:SourceIp", []string{"10.0.0.0/8"}, false},
		{"ArnLike", "aws:PrincipalArn", []string{"arn:aws:iam::*:role/stow*"}, true},
		{"ArnNotLike", "aws:PrincipalArn", []string{"arn:aws:iam::*:role/other"}, true},
		{"ArnEquals", "aws:PrincipalArn", []string{"arn:aws:iam::123456789012:user/stowage"}, false},
	}
	for _, tc := range cases {
		if _, _, _, err := splitOperator(tc.op); err != nil {
			t.Fatalf("%s: %v", tc.op, err)
		}
		c := condition{operator: tc.op, key: strings.ToLower(tc.key), values: tc.values}
		if got := c.holds(ctx); got != tc.want {
			t.Errorf("%s %s %v = %v, want %v", tc.op, tc.key, tc.values, got, tc.want)
		}
	}
}

func TestPolicyDecisionsExplicitDenyWinsAndNothingIsAllowedByDefault(t *testing.T) {
	identity := mustPolicy(t, `{"Version":"2012-10-17","Statement":[
	  {"Effect":"Allow","Action":["ec2:Describe*","ec2:RunInstances"],"Resource":"*"},
	  {"Effect":"Deny","Action":"ec2:RunInstances","Resource":"arn:aws:ec2:*:*:instance/*","Condition":{"StringLike":{"ec2:InstanceType":"p5.*"}}},
	  {"Effect":"Allow","NotAction":"iam:*","Resource":"arn:aws:sqs:us-east-1:123456789012:q-?"}]}`, identityPolicy)
	cases := []struct {
		action, resource string
		ctx              map[string][]string
		want             decision
	}{
		{"ec2:DescribeInstances", "*", nil, allowed},
		{"EC2:describeinstances", "*", nil, allowed}, // actions are case-insensitive
		{"ec2:RunInstances", "arn:aws:ec2:us-east-1:1:instance/*", map[string][]string{"ec2:instancetype": {"m6i.large"}}, allowed},
		{"ec2:RunInstances", "arn:aws:ec2:us-east-1:1:instance/*", map[string][]string{"ec2:instancetype": {"p5.48xlarge"}}, explicitDeny},
		{"ec2:TerminateInstances", "*", nil, implicitDeny},
		{"sqs:SendMessage", "arn:aws:sqs:us-east-1:123456789012:q-a", nil, allowed},
		{"sqs:SendMessage", "arn:aws:sqs:us-east-1:123456789012:q-ab", nil, implicitDeny},
		{"iam:PassRole", "arn:aws:sqs:us-east-1:123456789012:q-a", nil, implicitDeny},
	}
	for _, tc := range cases {
		ctx := tc.ctx
		if ctx == nil {
			ctx = map[string][]string{}
		}
		if got := identity.decide(ar(tc.action, tc.resource, ctx), nil); got != tc.want {
			t.Errorf("%s on %s %v = %d, want %d", tc.action, tc.resource, tc.ctx, got, tc.want)
		}
	}
}

func TestResourcePoliciesMatchPrincipalsAndTheirDenyApplies(t *testing.T) {
	queue := mustPolicy(t, `{"Version":"2012-10-17","Statement":[
	  {"Effect":"Allow","Principal":{"Service":["events.amazonaws.com"]},"Action":"sqs:SendMessage","Resource":"*"},
	  {"Effect":"Deny","Principal":"*","Action":"sqs:*","Resource":"*","Condition":{"Bool":{"aws:SecureTransport":"false"}}}]}`, resourcePolicy)
	events := &subject{account: "123456789012", services: []string{"events.amazonaws.com"}}
	role := &subject{account: "123456789012", arns: []string{"arn:aws:iam::123456789012:role/lambda"}}
	tls := map[string][]string{"aws:securetransport": {"true"}}
	plain := map[string][]string{"aws:securetransport": {"false"}}
	send := func(ctx map[string][]string) authRequest {
		return ar("sqs:SendMessage", "arn:aws:sqs:us-east-1:123456789012:q", ctx)
	}
	if d := queue.decide(send(tls), events); d != allowed {
		t.Errorf("EventBridge sending over TLS: %d, want allowed", d)
	}
	if d := queue.decide(send(tls), role); d != implicitDeny {
		t.Errorf("a role sending: %d, want implicitly denied by the queue's policy", d)
	}
	receiver := mustPolicy(t, `{"Statement":{"Effect":"Allow","Action":"sqs:ReceiveMessage","Resource":"*"}}`, identityPolicy)
	receive := ar("sqs:ReceiveMessage", "arn:aws:sqs:us-east-1:123456789012:q", plain)
	if d := decideAll(receive, role, []*policy{receiver}, queue); d != explicitDeny {
		t.Errorf("receiving without TLS: %d, want the queue's explicit deny to beat the role's allow", d)
	}
	receive.context = tls
	if d := decideAll(receive, role, []*policy{receiver}, queue); d != allowed {
		t.Errorf("receiving over TLS: %d, want allowed by the role's policy", d)
	}
}

func TestParsePolicyIsStrict(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		kind      policyKind
		want      string
	}{
		{"unknown element", `{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*","Actions":"x"}]}`, identityPolicy, "unknown field"},
		{"bad effect", `{"Statement":[{"Effect":"Permit","Action":"*","Resource":"*"}]}`, identityPolicy, "Effect"},
		{"no action", `{"Statement":[{"Effect":"Allow","Resource":"*"}]}`, identityPolicy, "Action"},
		{"no resource", `{"Statement":[{"Effect":"Allow","Action":"*"}]}`, identityPolicy, "Resource"},
		{"principal in identity policy", `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"*","Resource":"*"}]}`, identityPolicy, "Principal"},
		{"no principal in trust policy", `{"Statement":[{"Effect":"Allow","Action":"sts:AssumeRole"}]}`, trustPolicy, "Principal"},
		{"unknown operator", `{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"StringSimilar":{"a":"b"}}}]}`, identityPolicy, "operator"},
		{"bad version", `{"Version":"2020-01-01","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`, identityPolicy, "Version"},
	} {
		if _, err := parsePolicy(tc.doc, tc.kind); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %q", tc.name, err, tc.want)
		}
	}
	if n := policySize("{ \"a\" :\n\t\"b c\" }"); n != 10 {
		t.Errorf("policySize counts %d characters, want 10 (white space is not counted)", n)
	}
}

func mustPolicy(t *testing.T, doc string, kind policyKind) *policy {
	t.Helper()
	p, err := parsePolicy(doc, kind)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
