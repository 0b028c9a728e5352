package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/stowage-dev/stowage/controller/options"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/simulate"
	"github.com/stowage-dev/stowage/controller/simulate/report"
)

type simulateFlags struct {
	scenario, compare, reportFile string
	nodeGroups                    []string
	seed                          int64
	json                          bool
	preferences                   scheduler.PreferencePolicy
}

func runSimulate(args []string, stdout, stderr io.Writer) int {
	var f simulateFlags
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.scenario, "scenario", "", "scenario file: a Scenario document plus NodePools, NodeClasses and workloads (required; see docs/guides/simulate.md)")
	fs.Int64Var(&f.seed, "seed", 0, "seed for every random draw (default: the scenario's)")
	fs.StringVar(&f.compare, "compare", "", "also run a baseline on the same scenario: cas (Cluster Autoscaler)")
	fs.Func("node-groups", "with --compare cas: the Cluster Autoscaler's node groups as the AWS CLI prints them (aws eks describe-nodegroup, aws autoscaling describe-auto-scaling-groups, aws ec2 describe-launch-template-versions), instead of the scenario's; repeat for several files. A scenario without NodePools then runs the pools stowage import cluster-autoscaler proposes", func(v string) error {
		f.nodeGroups = append(f.nodeGroups, v)
		return nil
	})
	fs.StringVar(&f.reportFile, "report", "", "write a self-contained HTML report to this file")
	fs.BoolVar(&f.json, "json", false, "print the report as JSON (schema in docs/guides/simulate-report.md) instead of the summary")
	options.PreferenceFlags(fs, &f.preferences, false, stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := f.validate(fs); err != nil {
		fmt.Fprintf(stderr, "stowage simulate: %v\n", err)
		return 2
	}
	if err := f.run(stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "stowage simulate: %v\n", err)
		return 1
	}
	return 0
}

func (f *simulateFlags) validate(fs *flag.FlagSet) error {
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected argument %q: pass the file with --scenario", fs.Arg(0))
	case f.scenario == "":
		return fmt.Errorf("--scenario is required, e.g. --scenario examples/scenarios/2am-spike.yaml")
	case f.compare != "" && f.compare != "cas":
		return fmt.Errorf("--compare %q: the only baseline is cas", f.compare)
	case len(f.nodeGroups) > 0 && f.compare != "cas":
		return fmt.Errorf("--node-groups are the Cluster Autoscaler baseline's: add --compare cas")
	}
	return nil
}

func (f *simulateFlags) run(stdout, stderr io.Writer) error {
	file, err := os.Open(f.scenario)
	if err != nil {
		return err
	}
	defer file.Close()
	s, err := simulate.ReadScenario(file)
	if err != nil {
		return fileError(f.scenario, err)
	}
	printWarnings(stderr, f.scenario, s.Warnings)
	if len(f.nodeGroups) > 0 {
		if err := useNodeGroups(s, f.nodeGroups, stderr); err != nil {
			return err
		}
	}
	opts := simulate.Options{CompareCAS: f.compare == "cas", Preferences: f.preferences}
	if f.seed != 0 {
		opts.Seed = &f.seed
	}
	bars := map[string]*report.Progress{}
	opts.Progress = func(system string, done, total time.Duration) {
		if bars[system] == nil {
			bars[system] = report.NewProgress(stderr, system, int64(total/time.Second))
		}
		_ = bars[system].Update(int64(done / time.Second))
	}
	rep, err := simulate.Run(context.Background(), s, opts)
	if err != nil {
		return err
	}
	for _, b := range bars {
		_ = b.Done()
	}
	if f.reportFile != "" {
		if err := writeHTML(f.reportFile, rep); err != nil {
			return err
		}
	}
	if f.json {
		return report.WriteJSON(stdout, rep)
	}
	if err := report.WriteText(stdout, rep); err != nil {
		return err
	}
	if f.reportFile != "" {
		fmt.Fprintf(stdout, "\nreport written to %s\n", f.reportFile)
	}
	return nil
}

func writeHTML(path string, rep *report.Report) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := report.WriteHTML(out, rep); err != nil {
		out.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return out.Close()
}
