package karpenter_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/karpenter"
	"github.com/stowage-dev/stowage/controller/manifest"
	"github.com/stowage-dev/stowage/controller/snapshotfile"
)

// outcome is what importing one file must give: the Stowage objects it
// converts to ("NodePool default"), the objects it refuses with a word of
// the reason, and words every warning list must hold.
type outcome struct {
	converted []string
	refused   map[string]string
	warnings  []string
}

const placeholderWarning = "spec.role: keeps the placeholder ${CLUSTER_NAME} as written"

// outcomes holds the expected result of every file in testdata: the upstream
// examples unchanged, and the manifests written for this test.
var outcomes = map[string]outcome{
	"upstream/100-cpu-limit.yaml":          {converted: []string{"NodePool limitcpu100", "NodeClass default"}, warnings: []string{placeholderWarning}},
	"upstream/al2-custom-ami.yaml":         {converted: []string{"NodePool default"}, refused: map[string]string{"EC2NodeClass al2": "spec.amiFamily: AL2: Amazon Linux 2 images are not supported"}},
	"upstream/al2-custom-userdata.yaml":    {converted: []string{"NodePool default", "NodeClass al2"}, warnings: []string{placeholderWarning}},
	"upstream/al2-kubelet-log-query.yaml":  {converted: []string{"NodePool default", "NodeClass al2"}, warnings: []string{placeholderWarning}},
	"upstream/al2023-custom-userdata.yaml": {converted: []string{"NodePool default", "NodeClass al2023"}, warnings: []string{placeholderWarning}},
	"upstream/bottlerocket.yaml":           {converted: []string{"NodePool default", "NodeClass bottlerocket"}, warnings: []string{placeholderWarning}},
	"upstream/br-custom-userdata.yaml":     {converted: []string{"NodePool default", "NodeClass bottlerocket"}, warnings: []string{placeholderWarning}},
	"upstream/custom-family.yaml":          {converted: []string{"NodePool default", "NodeClass custom-family"}, warnings: []string{placeholderWarning}},
	"upstream/docs-nodepool-gpu-isolation.yaml": {converted: []string{"NodePool gpu"},
		warnings: []string{`spec.template.spec.nodeClassRef: no nodeClassRef (Karpenter v1 requires one): the pool uses the NodeClass "default"`}},
	"upstream/general-purpose.yaml":   {converted: []string{"NodePool general-purpose", "NodeClass default"}, warnings: []string{placeholderWarning}},
	"upstream/large-instances.yaml":   {converted: []string{"NodePool large-instances", "NodeClass default"}, warnings: []string{placeholderWarning}},
	"upstream/min-values-family.yaml": {converted: []string{"NodePool spot", "NodeClass default"}, warnings: []string{placeholderWarning}},
	"upstream/multiple-arch.yaml":     {converted: []string{"NodePool amd64", "NodePool arm64", "NodeClass default"}, warnings: []string{placeholderWarning}},
	"upstream/spot.yaml":              {converted: []string{"NodePool spot", "NodeClass default"}, warnings: []string{placeholderWarning}},
	"upstream/windows-2019.yaml": {refused: map[string]string{"NodePool windows2019": "Windows nodes are not supported",
		"EC2NodeClass windows2019": "windows2019@latest: Windows images are not supported"}},
	"upstream/windows-2022.yaml": {refused: map[string]string{"NodePool windows2022": "Windows nodes are not supported",
		"EC2NodeClass windows2022": "windows2022@latest: Windows images are not supported"}},
	"upstream/windows-custom-userdata.yaml": {refused: map[string]string{"NodePool windows2022": "Windows nodes are not supported",
		"EC2NodeClass windows2022": "spec.amiFamily: Windows2022: Windows images are not supported"}},
	"full-nodepool.yaml": {converted: []string{"NodePool everything"}, warnings: []string{
		"spec.template.spec.requirements[3]: not converted: karpenter.k8s.aws/instance-cpu-manufacturer is a Karpenter label Stowage has no value for",
		"spec.replicas: converted to minNodes"}},
	"full-ec2nodeclass.yaml": {converted: []string{"NodeClass everything"}, warnings: []string{
		"spec.ipPrefixCount: not converted", "spec.enclaveOptions: not converted", "spec.context: not converted",
		"spec.blockDeviceMappings[0].ebs.volumeInitializationRate: not converted"}},
	"kubectl-dump.yaml": {converted: []string{"NodePool default", "NodeClass default"}},
	"newer-policies.yaml": {converted: []string{"NodePool balanced", "NodePool static"}, warnings: []string{
		"spec.replicas: converted to minNodes"}},
	"ssm-parameter.yaml": {refused: map[string]string{"EC2NodeClass ssm": "spec.amiSelectorTerms[0].ssmParameter: Stowage does not read image ids from SSM parameters"}},
}

func testdataFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{"testdata/*.yaml", "testdata/upstream/*.yaml"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) != len(outcomes) {
		t.Fatalf("%d files in testdata, %d expected outcomes: write the outcome of every file", len(files), len(outcomes))
	}
	return files
}

func importFile(t *testing.T, file string) (*karpenter.Result, []byte) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return karpenter.Import(objs), data
}

func stowageID(o *karpenter.Object) string {
	switch {
	case o.NodePool != nil:
		return "NodePool " + o.NodePool.Name
	case o.NodeClass != nil:
		return "NodeClass " + o.NodeClass.Name
	}
	return "NodeClaim " + o.NodeClaim.Name
}

// TestEveryManifestHasItsOutcome imports every file of testdata and checks
// what it converts, refuses (and why) and warns about.
func TestEveryManifestHasItsOutcome(t *testing.T) {
	for _, file := range testdataFiles(t) {
		rel := strings.TrimPrefix(file, "testdata/")
		t.Run(rel, func(t *testing.T) {
			want, ok := outcomes[rel]
			if !ok {
				t.Fatalf("no expected outcome for %s", rel)
			}
			r, _ := importFile(t, file)
			var got, warnings []string
			for _, o := range r.Objects {
				got = append(got, stowageID(o))
				for _, w := range o.Warnings() {
					warnings = append(warnings, w.Error())
				}
			}
			if !slices.Equal(got, want.converted) {
				t.Errorf("converted %v, want %v", got, want.converted)
			}
			refused := map[string]string{}
			for _, f := range r.Refusals {
				refused[f.Source.ID()] = f.Err.Error()
			}
			if len(refused) != len(want.refused) {
				t.Errorf("refused %v, want %v", refused, want.refused)
			}
			for id, why := range want.refused {
				if !strings.Contains(refused[id], why) {
					t.Errorf("%s: refusal %q does not say %q", id, refused[id], why)
				}
			}
			for _, w := range want.warnings {
				if !slices.ContainsFunc(warnings, func(s string) bool { return strings.Contains(s, w) }) {
					t.Errorf("no warning says %q; warnings:\n%s", w, strings.Join(warnings, "\n"))
				}
			}
		})
	}
}

// TestWrittenYAMLIsAStowageSnapshot writes every conversion and reads it back
// with the snapshot reader, which is as strict as the API server.
func TestWrittenYAMLIsAStowageSnapshot(t *testing.T) {
	for _, file := range testdataFiles(t) {
		r, _ := importFile(t, file)
		if len(r.Objects) == 0 {
			continue
		}
		var out bytes.Buffer
		if err := (karpenter.YAMLWriter{File: file}).Write(&out, r); err != nil {
			t.Fatal(err)
		}
		objs, err := snapshotfile.Read(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Errorf("%s: the written YAML does not read back: %v\n%s", file, err, out.String())
			continue
		}
		if n := len(objs.NodePools) + len(objs.NodeClasses); n != len(r.Objects) {
			t.Errorf("%s: %d objects written, %d read back", file, len(r.Objects), n)
		}
		for _, f := range r.Refusals {
			if !strings.Contains(out.String(), "# Refused: "+f.Source.APIVersion+" "+f.Source.ID()) {
				t.Errorf("%s: the output does not record the refusal of %s", file, f.Source.ID())
			}
		}
	}
}

// TestNothingIsDroppedSilently checks, for the manifests that set every
// field, that each value written in the Karpenter object is in the output:
// in the Stowage object, or in a comment that names the field and keeps the
// value. Server-set metadata and status are left out by design.
func TestNothingIsDroppedSilently(t *testing.T) {
	for _, file := range []string{"testdata/full-nodepool.yaml", "testdata/full-ec2nodeclass.yaml", "testdata/kubectl-dump.yaml"} {
		r, data := importFile(t, file)
		var out bytes.Buffer
		if err := (karpenter.YAMLWriter{File: file}).Write(&out, r); err != nil {
			t.Fatal(err)
		}
		objs, err := manifest.Read(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range objs {
			if m.Kind == "NodeClaim" {
				continue
			}
			var v map[string]any
			if err := json.Unmarshal(m.JSON(), &v); err != nil {
				t.Fatal(err)
			}
			delete(v, "status")
			meta := v["metadata"].(map[string]any)
			for _, serverSet := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "finalizers"} {
				delete(meta, serverSet)
			}
			leaves(v, "", func(path, value string) {
				renamed := strings.HasSuffix(path, "nodeClassRef.group") || strings.HasSuffix(path, "nodeClassRef.kind")
				if !renamed && !inOutput(out.String(), value) && !strings.Contains(path, "annotations.karpenter.sh") && !strings.Contains(path, "last-applied") {
					t.Errorf("%s: %s %s: the value %q is not in the output\n%s", file, m.ID(), path, value, out.String())
				}
			})
		}
	}
}

// inOutput reports whether a written value is in the output, as written or
// as the converter renders it (durations in Go's form, quantities in their
// canonical form, Karpenter's keys as Stowage's, text line by line).
func inOutput(out, value string) bool {
	if strings.Contains(out, value) {
		return true
	}
	if lines := strings.Split(strings.TrimSpace(value), "\n"); len(lines) > 1 {
		return !slices.ContainsFunc(lines, func(l string) bool { return !strings.Contains(out, l) })
	}
	if d, err := time.ParseDuration(value); err == nil && strings.Contains(out, d.String()) {
		return true
	}
	if q, err := resource.ParseQuantity(value); err == nil && strings.Contains(out, q.String()) {
		return true
	}
	return v1alpha1.CanonicalLabelKey(value) != value && strings.Contains(out, v1alpha1.CanonicalLabelKey(value))
}

func leaves(v any, path string, f func(path, value string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, item := range x {
			leaves(item, path+"."+k, f)
		}
	case []any:
		for i, item := range x {
			leaves(item, fmt.Sprintf("%s[%d]", path, i), f)
		}
	case nil:
	default:
		s := fmt.Sprint(x)
		if b, ok := x.(bool); ok {
			s = fmt.Sprint(b)
		}
		f(path, s)
	}
}

// TestBalancedIsImportedAsBalanced: Karpenter's Balanced policy (1.14) is
// Stowage's, one to one, without a warning.
func TestBalancedIsImportedAsBalanced(t *testing.T) {
	r, _ := importFile(t, "testdata/newer-policies.yaml")
	for _, o := range r.Objects {
		if o.NodePool == nil || o.NodePool.Name != "balanced" {
			continue
		}
		if got := o.NodePool.Spec.Disruption.ConsolidationPolicy; got != v1alpha1.ConsolidationPolicyBalanced {
			t.Errorf("consolidationPolicy %q, want Balanced", got)
		}
		for _, w := range o.Warnings() {
			if strings.Contains(w.Error(), "consolidationPolicy") {
				t.Errorf("a warning about the policy: %v", w)
			}
		}
		return
	}
	t.Fatal("NodePool balanced was not converted")
}
