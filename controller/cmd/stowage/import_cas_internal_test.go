package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stowage-dev/stowage/controller/snapshotfile"
)

const casExamples = "../../../examples/cluster-autoscaler/"

func casFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(casExamples + "*.json")
	if err != nil || len(files) != 4 {
		t.Fatalf("want the 4 example files: %v, %v", files, err)
	}
	return files
}

// TestImportClusterAutoscalerWritesStowageObjects converts the example node
// groups and reads the output back as strictly as the API server would.
func TestImportClusterAutoscalerWritesStowageObjects(t *testing.T) {
	var out, errOut bytes.Buffer
	code := runImport(append([]string{"cluster-autoscaler"}, casFiles(t)...), strings.NewReader(""), &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	objs, err := snapshotfile.Read(strings.NewReader(out.String()))
	if err != nil {
		t.Fatalf("the output is not Stowage objects: %v\n%s", err, out.String())
	}
	if len(objs.NodePools) != 4 || len(objs.NodeClasses) != 2 {
		t.Errorf("%d pools and %d classes, want 4 and 2:\n%s", len(objs.NodePools), len(objs.NodeClasses), out.String())
	}
	for _, want := range []string{"# replaces node group web (c6i.2xlarge; on-demand; 3 to 30 nodes)",
		"# instance types widened from g5.12xlarge to g5.12xlarge, g5.24xlarge, g6.12xlarge"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output does not say %q", want)
		}
	}
}

func TestImportClusterAutoscalerRefusesBadArguments(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"cluster-autoscaler"}, 2, "name at least one file"},
		{[]string{"cluster-autoscaler", "--max-types", "0", "x.json"}, 2, "--max-types 0: give at least 1"},
		{[]string{"cluster-autoscaler", "/nonexistent.json"}, 1, "opening /nonexistent.json"},
		{[]string{"cluster-autoscaler", casExamples + "asgs.json"}, 1, "describe-launch-template-versions --launch-template-id lt-0ffeeddccbbaa9988"},
	} {
		var out, errOut bytes.Buffer
		if code := runImport(tc.args, strings.NewReader(""), &out, &errOut); code != tc.code || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut.String(), tc.code, tc.want)
		}
	}
}

// TestSimulateComparesTheUsersNodeGroups runs the example scenario, which has
// no pools, against the example node groups: Cluster Autoscaler scales those
// groups, Stowage the pools proposed for them, and the proposal's widened
// types carry web through the shortage of its one node group type.
func TestSimulateComparesTheUsersNodeGroups(t *testing.T) {
	args := []string{"simulate", "--scenario", casExamples + "scenario.yaml", "--compare", "cas"}
	for _, f := range casFiles(t) {
		args = append(args, "--node-groups", f)
	}
	var out, errOut bytes.Buffer
	if code := run(args, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"Stowage runs the 4 pools stowage import cluster-autoscaler proposes", "node group gpu-inference names no zones"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, errOut.String())
		}
	}
	for _, want := range []string{"c6i.2xlarge/us-east-1a/on-demand short -> c7i.2xlarge/us-east-1a/on-demand", "Fallbacks, cluster-autoscaler",
		"c6i.2xlarge/us-east-1a/on-demand short -> none"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report does not say %q:\n%s", want, out.String())
		}
	}
	var bad bytes.Buffer
	if code := run([]string{"simulate", "--scenario", casExamples + "scenario.yaml", "--node-groups", casFiles(t)[0]}, &out, &bad); code != 2 || !strings.Contains(bad.String(), "add --compare cas") {
		t.Errorf("--node-groups without --compare cas: exit %d, %s", code, bad.String())
	}
}
