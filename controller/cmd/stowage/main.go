// Command stowage is Stowage's one binary: `run` is the in-cluster controller;
// `schedule` answers what Stowage would decide on a snapshot of a cluster;
// `simulate` replays a scenario; `import karpenter` converts Karpenter's
// NodePools and EC2NodeClasses (to YAML or Terraform); `import
// cluster-autoscaler` proposes pools for Cluster Autoscaler's node groups;
// `render user-data` prints the user data a NodeClass's nodes boot with;
// `version` prints what the build was stamped with.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
)

const usage = `usage: stowage <command> [flags]

commands:
  run        run the controller in the cluster (flags: stowage run -h)
  simulate   replay a scenario on a virtual clock, optionally beside Cluster Autoscaler
  schedule   decide where pending pods go and which nodes to launch, from a snapshot file
  import     convert Karpenter v1 NodePools and EC2NodeClasses (stowage import karpenter [--format yaml|hcl] FILE...),
             or propose pools for Cluster Autoscaler's node groups (stowage import cluster-autoscaler FILE...)
  render     print the user data a NodeClass's nodes boot with (stowage render user-data --manifests FILE ...)
  version    print the version and commit this binary was built from
`

func main() {
	// A report goes out in one write at the end: a reader that stops early
	// (`stowage schedule ... | head`) finds it whole in the pipe, rather
	// than killing the command mid-report with SIGPIPE. `run` logs to
	// stderr only.
	stdout := bufio.NewWriterSize(os.Stdout, 1<<20)
	code := run(os.Args[1:], stdout, os.Stderr)
	if err := stdout.Flush(); err != nil && code == 0 {
		code = 1
	}
	os.Exit(code)
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "run":
		return runController(args[1:], stderr)
	case "schedule":
		return runSchedule(args[1:], stdout, stderr)
	case "simulate":
		return runSimulate(args[1:], stdout, stderr)
	case "import":
		return runImport(args[1:], os.Stdin, stdout, stderr)
	case "render":
		return runRender(args[1:], stdout, stderr)
	case "version":
		return runVersion(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "stowage: unknown command %q\n%s", args[0], usage)
	return 2
}
