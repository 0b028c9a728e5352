package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/stowage-dev/stowage/controller/clusterautoscaler"
)

const importCASUsage = `usage: stowage import cluster-autoscaler [--cluster-name NAME] [--node-role ROLE] [--max-types N] FILE...

Reads the node groups a Cluster Autoscaler scales, as the AWS CLI prints them
(aws eks describe-nodegroup, aws autoscaling describe-auto-scaling-groups, and
aws ec2 describe-launch-template-versions for groups whose instance type is in their
launch template; - reads stdin), and writes the Stowage NodeClasses and NodePools
that serve the same workloads: one pool per class of groups (the same labels, taints
and image family) and capacity type, their instance types widened to same-shape
types and the next size up. Compare them on your workloads before any change with
stowage simulate --compare cas --node-groups FILE.
`

// runImportCAS is `stowage import cluster-autoscaler FILE...`.
func runImportCAS(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("import cluster-autoscaler", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o clusterautoscaler.Options
	fs.StringVar(&o.Cluster, "cluster-name", "", "the EKS cluster (default: the one the input names)")
	fs.StringVar(&o.NodeRole, "node-role", "", "the nodes' IAM role name (default: the managed node groups')")
	fs.IntVar(&o.MaxTypes, "max-types", clusterautoscaler.MaxTypes, "most instance types per pool")
	fs.Usage = func() { fmt.Fprint(stderr, importCASUsage); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprint(stderr, "stowage import cluster-autoscaler: name at least one file (- reads stdin)\n")
		return 2
	}
	if o.MaxTypes < 1 {
		fmt.Fprintf(stderr, "stowage import cluster-autoscaler: --max-types %d: give at least 1\n", o.MaxTypes)
		return 2
	}
	groups, err := readNodeGroups(fs.Args(), stdin)
	if err != nil {
		fmt.Fprintf(stderr, "stowage import cluster-autoscaler: %v\n", err)
		return 1
	}
	p, err := clusterautoscaler.Propose(groups, o)
	if err != nil {
		fmt.Fprintf(stderr, "stowage import cluster-autoscaler: %v\n", err)
		return 1
	}
	if err := p.WriteYAML(stdout); err != nil {
		fmt.Fprintf(stderr, "stowage import cluster-autoscaler: %v\n", err)
		return 1
	}
	return 0
}

// readNodeGroups reads AWS CLI output files (- is stdin) into node groups.
func readNodeGroups(files []string, stdin io.Reader) ([]*clusterautoscaler.NodeGroup, error) {
	var in clusterautoscaler.Input
	for _, file := range files {
		r := stdin
		if file != "-" {
			f, err := os.Open(file)
			if err != nil {
				return nil, fmt.Errorf("opening %s: %w", file, err)
			}
			defer f.Close()
			r = f
		}
		if err := in.Read(file, r); err != nil {
			return nil, err
		}
	}
	return in.NodeGroups()
}
