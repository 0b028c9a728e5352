package iampolicy

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// LambdaConfig is what the interruption Lambda's policy is scoped to.
type LambdaConfig struct {
	Partition string // "aws" when empty
	Region    string
	AccountID string
	// QueueARN is the interruption queue the event source mapping reads.
	QueueARN string
	// LogGroup is the function's log group, /aws/lambda/<function>.
	LogGroup string
	// SubnetIDs and SecurityGroupIDs are the function's VPC settings, for a
	// cluster whose endpoint is private; none for a function outside a VPC.
	SubnetIDs, SecurityGroupIDs []string
}

// Lambda generates the interruption Lambda's policy: what its SQS event
// source mapping needs on its queue (receive, delete, read the attributes),
// writing to its own log group, and, in a VPC, the network interfaces Lambda
// makes in its subnets; nothing else. Its Kubernetes permissions come from
// its access entry, not from IAM.
func Lambda(c LambdaConfig) (Document, error) {
	p := c.Partition
	if p == "" {
		p = "aws"
	}
	var errs []error
	if !strings.HasPrefix(c.QueueARN, "arn:"+p+":sqs:"+c.Region+":"+c.AccountID+":") || strings.ContainsAny(c.QueueARN, "*?") {
		errs = append(errs, fmt.Errorf("queue_arn: %q is not a queue of %s in %s", c.QueueARN, c.AccountID, c.Region))
	}
	if !strings.HasPrefix(c.LogGroup, "/aws/lambda/") || strings.ContainsAny(c.LogGroup, "*?") {
		errs = append(errs, fmt.Errorf("log group %q is not a function's (/aws/lambda/<name>)", c.LogGroup))
	}
	if len(c.SubnetIDs) > 0 != (len(c.SecurityGroupIDs) > 0) {
		errs = append(errs, errors.New("vpc: subnet_ids and security_group_ids go together: set both, or neither"))
	}
	if err := errors.Join(errs...); err != nil {
		return Document{}, err
	}
	ec2 := func(kind, id string) string {
		return "arn:" + p + ":ec2:" + c.Region + ":" + c.AccountID + ":" + kind + "/" + id
	}
	d := Document{Version: Version, Statement: []Statement{
		{Sid: "ReadTheInterruptionQueue", Action: []string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"},
			Resource: []string{c.QueueARN}},
		{Sid: "WriteItsLogs", Action: []string{"logs:CreateLogStream", "logs:PutLogEvents"},
			Resource: []string{"arn:" + p + ":logs:" + c.Region + ":" + c.AccountID + ":log-group:" + c.LogGroup + ":*"}},
	}}
	if len(c.SubnetIDs) > 0 {
		interfaces := []string{ec2("network-interface", "*")}
		for _, s := range slices.Sorted(slices.Values(c.SubnetIDs)) {
			interfaces = append(interfaces, ec2("subnet", s))
		}
		for _, g := range slices.Sorted(slices.Values(c.SecurityGroupIDs)) {
			interfaces = append(interfaces, ec2("security-group", g))
		}
		d.Statement = append(d.Statement,
			Statement{Sid: "DescribeNetworkInterfaces", Action: []string{"ec2:DescribeNetworkInterfaces"}, Resource: []string{"*"},
				Condition: Conditions{}.with("StringEquals", "aws:RequestedRegion", c.Region)},
			Statement{Sid: "CreateInterfacesInItsSubnets", Action: []string{"ec2:CreateNetworkInterface"}, Resource: interfaces},
			Statement{Sid: "ManageItsInterfaces", Action: []string{"ec2:DeleteNetworkInterface", "ec2:AssignPrivateIpAddresses",
				"ec2:UnassignPrivateIpAddresses"}, Resource: []string{ec2("network-interface", "*")}})
	}
	return d.allowAll(), nil
}
