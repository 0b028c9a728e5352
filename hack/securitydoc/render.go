package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stowage-dev/stowage/controller/aws/iampolicy"
	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/karpenter"
	"github.com/stowage-dev/stowage/controller/manifest"
)

// The example's coordinates: the account and region of the docs' examples,
// and the names modules/stowage gives the queue and the Lambda for prod.
const (
	account  = "111122223333"
	region   = "us-east-1"
	cluster  = "prod"
	queue    = "stowage-prod"
	function = "stowage-prod-interruption"
)

// Render is the generated part of the page.
func Render(root string) (string, error) {
	cfg, err := seedConfig(filepath.Join(root, Seed))
	if err != nil {
		return "", err
	}
	controller, err := iampolicy.Controller(cfg)
	if err != nil {
		return "", fmt.Errorf("generating the controller's policy: %w", err)
	}
	lambda, err := iampolicy.Lambda(iampolicy.LambdaConfig{Region: region, AccountID: account,
		QueueARN: "arn:aws:sqs:" + region + ":" + account + ":" + queue, LogGroup: "/aws/lambda/" + function})
	if err != nil {
		return "", fmt.Errorf("generating the Lambda's policy: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nFor the seed's pools (`%s` as `stowage import karpenter` converts it: %s), cluster `%s`, account `%s`, "+
		"region `%s` and node role%s %s, the generator writes %d statements, %d characters of the %d IAM allows a role's "+
		"inline policies:\n\n", Seed, codeList(cfg.NodePools), cluster, account, region, plural(len(cfg.NodeRoleARNs)),
		codeList(cfg.NodeRoleARNs), len(controller.Statement), controller.Size(), iampolicy.InlineQuota)
	b.WriteString("| statement | actions | resources | conditions |\n|---|---|---|---|\n")
	for _, s := range controller.Statement {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", s.Sid, codeList(s.Action), codeList(s.Resource), conditions(s.Condition))
	}
	fmt.Fprintf(&b, "\n<details><summary>The controller's policy document</summary>\n\n```json\n%s\n```\n\n</details>\n", controller.Indented())
	fmt.Fprintf(&b, "\nThe interruption Lambda's role, for the queue `%s` and the function `%s`, outside a VPC:\n\n```json\n%s\n```\n\n",
		queue, function, lambda.Indented())
	return b.String(), nil
}

// seedConfig is the controller's configuration for the seed's pools: their
// names, the types they allow, the node roles their classes name.
func seedConfig(path string) (iampolicy.ControllerConfig, error) {
	f, err := os.Open(path)
	if err != nil {
		return iampolicy.ControllerConfig{}, err
	}
	defer f.Close()
	objs, err := manifest.Read(f)
	if err != nil {
		return iampolicy.ControllerConfig{}, fmt.Errorf("reading %s: %w", path, err)
	}
	all := catalogue.InstanceTypes(catalogue.Builtin(), catalogue.DefaultOptions())
	cfg := iampolicy.ControllerConfig{Region: region, AccountID: account, Cluster: cluster}
	for _, o := range karpenter.Import(objs).Objects {
		switch {
		case o.NodePool != nil:
			cfg.NodePools = append(cfg.NodePools, o.NodePool.Name)
			for _, t := range iampolicy.PoolInstanceTypes(o.NodePool, all) {
				if !slices.Contains(cfg.InstanceTypes, t) {
					cfg.InstanceTypes = append(cfg.InstanceTypes, t)
				}
			}
		case o.NodeClass != nil:
			if arn := "arn:aws:iam::" + account + ":role/" + o.NodeClass.Spec.Role; !slices.Contains(cfg.NodeRoleARNs, arn) {
				cfg.NodeRoleARNs = append(cfg.NodeRoleARNs, arn)
			}
		}
	}
	if len(cfg.NodePools) == 0 {
		return cfg, fmt.Errorf("%s holds no NodePool", path)
	}
	return cfg, nil
}

// conditions renders a statement's Condition block, one key a line.
func conditions(c iampolicy.Conditions) string {
	var parts []string
	for _, op := range sortedKeys(c) {
		for _, key := range sortedKeys(c[op]) {
			values := c[op][key]
			shown := codeList(values)
			if len(values) > 6 {
				shown = codeList(values[:4]) + fmt.Sprintf(", ... (%d in all)", len(values))
			}
			parts = append(parts, fmt.Sprintf("`%s` `%s`: %s", op, key, shown))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "<br>")
}

func codeList(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = "`" + s + "`"
	}
	return strings.Join(quoted, ", ")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// RenderOperator is the operator's part of the page: per resource, the
// actions its calls need, and the policy document with all of them.
func RenderOperator() string {
	doc := iampolicy.Operator()
	var b strings.Builder
	fmt.Fprintf(&b, "\n| resource | actions |\n|---|---|\n")
	for _, s := range doc.Statement {
		fmt.Fprintf(&b, "| `%s` | %s |\n", s.Sid, codeList(s.Action))
	}
	fmt.Fprintf(&b, "\nAs one document (%d statements, %d characters: a customer managed policy, within IAM's %d for one; "+
		"a user's inline policies may total only 2,048):\n\n<details><summary>The operator's policy document</summary>\n\n```json\n%s\n```\n\n</details>\n\n",
		len(doc.Statement), doc.Size(), iampolicy.ManagedQuota, doc.Indented())
	return b.String()
}
