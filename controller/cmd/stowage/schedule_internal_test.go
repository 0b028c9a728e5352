package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const (
	example    = "../../../examples/2am-spike/snapshot.yaml"
	scheduleMD = "../../../docs/guides/schedule.md"
)

// stowage runs the command in-process and returns its exit code and output.
func stowage(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// decision is the --json output, decoded with the field names docs/guides/schedule.md gives.
type decision struct {
	NodeClaims []struct {
		Name          string            `json:"name"`
		NodePool      string            `json:"nodePool"`
		Zone          string            `json:"zone"`
		Zones         []string          `json:"zones"`
		CapacityType  string            `json:"capacityType"`
		InstanceTypes []string          `json:"instanceTypes"`
		PricePerHour  float64           `json:"pricePerHour"`
		Requests      map[string]string `json:"requests"`
		Pods          []string          `json:"pods"`
	} `json:"nodeClaims"`
	Existing      []struct{ Pod, Node string }   `json:"existing"`
	Unschedulable []struct{ Pod, Reason string } `json:"unschedulable"`
	Buffers       []struct {
		Buffer        string `json:"buffer"`
		Ready         bool   `json:"ready"`
		Reason        string `json:"reason"`
		Wanted        int32  `json:"wanted"`
		Replicas      int32  `json:"replicas"`
		OnExisting    int    `json:"onExisting"`
		OnNewNodes    int    `json:"onNewNodes"`
		Unschedulable int    `json:"unschedulable"`
	} `json:"buffers"`
	Totals struct {
		NodeClaims        int     `json:"nodeClaims"`
		PricePerHour      float64 `json:"pricePerHour"`
		PodsOnNewNodes    int     `json:"podsOnNewNodes"`
		PodsOnExisting    int     `json:"podsOnExisting"`
		PodsUnschedulable int     `json:"podsUnschedulable"`
	} `json:"totals"`
}

func scheduleJSON(t *testing.T, args ...string) (decision, string) {
	t.Helper()
	code, stdout, stderr := stowage(t, append([]string{"schedule", "--json"}, args...)...)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var d decision
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("decoding the --json output: %v\n%s", err, stdout)
	}
	return d, stdout
}

// pendingPods counts the example's pods the way a reader would: Pod documents
// without a nodeName.
func pendingPods(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, doc := range strings.Split(string(data), "\n---\n") {
		if regexp.MustCompile(`(?m)^kind: Pod$`).MatchString(doc) && !strings.Contains(doc, "nodeName:") {
			n++
		}
	}
	return n
}

func TestScheduleJSONOnTheExample(t *testing.T) {
	d, _ := scheduleJSON(t, "--snapshot", example)
	pending := pendingPods(t, example)
	if pending != 128 {
		t.Fatalf("the example has %d pending pods; the test expects the 128 its header describes", pending)
	}
	var price float64
	pods := 0
	names := map[string]bool{}
	for _, nc := range d.NodeClaims {
		price += nc.PricePerHour
		pods += len(nc.Pods)
		if names[nc.Name] {
			t.Errorf("claim name %s is not unique", nc.Name)
		}
		names[nc.Name] = true
		if len(nc.InstanceTypes) == 0 || len(nc.Pods) == 0 || !slices.Contains(nc.Zones, nc.Zone) || nc.Requests["pods"] == "" {
			t.Errorf("claim %+v: want instance types, pods, requests and its zone among its zones", nc)
		}
		switch nc.NodePool {
		case "gpu-inference":
			// The model cache volumes live in us-east-1a; the pool is on-demand and
			// allows three types, of which g6.12xlarge ($4.6016) is the cheapest.
			if nc.Zone != "us-east-1a" || nc.CapacityType != "on-demand" || nc.InstanceTypes[0] != "g6.12xlarge" || nc.PricePerHour != 4.6016 {
				t.Errorf("gpu claim %s: %s %s %v $%v; want us-east-1a on-demand g6.12xlarge first at $4.6016", nc.Name, nc.Zone, nc.CapacityType, nc.InstanceTypes, nc.PricePerHour)
			}
			for _, it := range nc.InstanceTypes {
				if !slices.Contains([]string{"g5.12xlarge", "g5.24xlarge", "g6.12xlarge"}, it) {
					t.Errorf("gpu claim %s lists %s, which the pool does not allow", nc.Name, it)
				}
			}
			if nc.Requests["nvidia.com/gpu"] != "4" {
				t.Errorf("gpu claim %s requests %v, want 4 nvidia.com/gpu", nc.Name, nc.Requests)
			}
		case "web-spot":
			// The heaviest pool (weight 100) is spot-only, c6i and m6i up to 16 vCPU.
			for _, it := range nc.InstanceTypes {
				family, size, _ := strings.Cut(it, ".")
				if (family != "c6i" && family != "m6i") || !slices.Contains([]string{"large", "xlarge", "2xlarge", "4xlarge"}, size) {
					t.Errorf("web claim %s lists %s", nc.Name, it)
				}
			}
			if nc.CapacityType != "spot" {
				t.Errorf("web claim %s is %s, want spot", nc.Name, nc.CapacityType)
			}
		default:
			t.Errorf("claim %s from pool %s: the spot pool had room for every web pod", nc.Name, nc.NodePool)
		}
	}
	tot := d.Totals
	if tot.NodeClaims != len(d.NodeClaims) || tot.PodsOnNewNodes != pods || tot.PodsOnExisting != len(d.Existing) ||
		tot.PodsUnschedulable != len(d.Unschedulable) || math.Abs(tot.PricePerHour-price) > 1e-9 {
		t.Errorf("totals %+v do not add up: %d claims, %d pods on them, $%f", tot, len(d.NodeClaims), pods, price)
	}
	if pods+len(d.Existing)+len(d.Unschedulable) != pending {
		t.Errorf("%d + %d + %d pods accounted for, want the %d pending", pods, len(d.Existing), len(d.Unschedulable), pending)
	}
}

func TestScheduleJSONIsStable(t *testing.T) {
	_, first := scheduleJSON(t, "--snapshot", example)
	_, second := scheduleJSON(t, "--snapshot", example)
	if first != second {
		t.Error("two runs on the same snapshot printed different bytes")
	}
}

func TestScheduleTextOnTheExample(t *testing.T) {
	d, _ := scheduleJSON(t, "--snapshot", example)
	code, stdout, stderr := stowage(t, "schedule", "--snapshot", example)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if h := strings.Fields(lines[0]); strings.Join(h, " ") != "NEW NODECLAIM NODEPOOL ZONE CAPACITY INSTANCE TYPES (cheapest first) $/HOUR PODS" {
		t.Errorf("header %q", lines[0])
	}
	for i, nc := range d.NodeClaims {
		if i+1 >= len(lines) {
			t.Fatalf("text lists %d claims, JSON %d", len(lines)-1, len(d.NodeClaims))
		}
		f := strings.Fields(lines[i+1])
		if len(f) < 7 || f[0] != nc.Name || f[1] != nc.NodePool || f[2] != nc.Zone || f[3] != nc.CapacityType ||
			strings.TrimSuffix(f[4], ",") != nc.InstanceTypes[0] || f[len(f)-2] != fmt.Sprintf("%.4f", nc.PricePerHour) || f[len(f)-1] != fmt.Sprint(len(nc.Pods)) {
			t.Errorf("line %q does not show claim %s (%s %s %s %s $%.4f, %d pods)", lines[i+1], nc.Name, nc.NodePool, nc.Zone, nc.CapacityType,
				nc.InstanceTypes[0], nc.PricePerHour, len(nc.Pods))
		}
		if more := len(nc.InstanceTypes) - 3; more > 0 && !strings.Contains(lines[i+1], fmt.Sprintf("(+%d more)", more)) {
			t.Errorf("line %q does not say (+%d more)", lines[i+1], more)
		}
	}
	want := fmt.Sprintf("%d new nodeclaims at $%.4f/hour; %d pods on new nodes, %d on existing capacity, %d unschedulable",
		d.Totals.NodeClaims, d.Totals.PricePerHour, d.Totals.PodsOnNewNodes, d.Totals.PodsOnExisting, d.Totals.PodsUnschedulable)
	if last := lines[len(lines)-1]; last != want {
		t.Errorf("totals line %q, want %q", last, want)
	}
}

// documentedSchema returns the JSON example of docs/guides/schedule.md with its comments removed.
func documentedSchema(t *testing.T) map[string]any {
	t.Helper()
	md, err := os.ReadFile(scheduleMD)
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```json\n(.*?)```").FindSubmatch(md)
	if block == nil {
		t.Fatal("docs/guides/schedule.md has no json block")
	}
	text := regexp.MustCompile(`(?m)\s*//.*$`).ReplaceAllString(string(block[1]), "")
	var schema map[string]any
	if err := json.Unmarshal([]byte(text), &schema); err != nil {
		t.Fatalf("parsing the docs/guides/schedule.md example: %v\n%s", err, text)
	}
	return schema
}

// sameShape reports every field the documentation has and the output lacks or
// types differently, and every field the output has that is not documented.
// Lists are compared through their first element; requests is a map of
// resource names, so only its type is compared.
func sameShape(path string, doc, got any) []string {
	kind := func(v any) string { return fmt.Sprintf("%T", v) }
	if kind(doc) != kind(got) {
		return []string{fmt.Sprintf("%s is %s, documented as %s", path, kind(got), kind(doc))}
	}
	var out []string
	switch d := doc.(type) {
	case map[string]any:
		g := got.(map[string]any)
		if strings.HasSuffix(path, ".requests") {
			return nil
		}
		for k, v := range d {
			if _, ok := g[k]; !ok {
				out = append(out, fmt.Sprintf("%s.%s is documented but missing", path, k))
				continue
			}
			out = append(out, sameShape(path+"."+k, v, g[k])...)
		}
		for k := range g {
			if _, ok := d[k]; !ok {
				out = append(out, fmt.Sprintf("%s.%s is not documented", path, k))
			}
		}
	case []any:
		if g := got.([]any); len(d) > 0 && len(g) > 0 {
			out = append(out, sameShape(path+"[0]", d[0], g[0])...)
		}
	}
	return out
}

// mixedSnapshot yields a claim, a pod on an existing node and an unschedulable pod.
const mixedSnapshot = `apiVersion: stowage.dev/v1alpha1
kind: NodePool
metadata: {name: web}
spec:
  template:
    spec:
      nodeClassRef: {name: web}
      requirements:
        - {key: stowage.dev/instance-family, operator: In, values: [m6i]}
---
apiVersion: v1
kind: Node
metadata:
  name: node-a
  labels: {kubernetes.io/hostname: node-a, topology.kubernetes.io/zone: us-east-1a}
status:
  allocatable: {cpu: "4", memory: 16Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata: {name: small, namespace: web}
spec:
  containers: [{name: c, image: i, resources: {requests: {cpu: "1", memory: 1Gi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: medium, namespace: web}
spec:
  containers: [{name: c, image: i, resources: {requests: {cpu: "6", memory: 8Gi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: huge, namespace: web}
spec:
  containers: [{name: c, image: i, resources: {requests: {cpu: "1000", memory: 1Gi}}}]
`

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestScheduleJSONMatchesTheDocumentedSchema(t *testing.T) {
	schema := documentedSchema(t)
	for _, tc := range []struct{ name, snapshot string }{
		{"the example", example},
		{"claims, existing capacity and unschedulable pods", writeFile(t, "mixed.yaml", mixedSnapshot)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, stdout := scheduleJSON(t, "--snapshot", tc.snapshot)
			var got map[string]any
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatal(err)
			}
			for _, problem := range sameShape("", schema, got) {
				t.Error(problem)
			}
			if tc.snapshot == example {
				return
			}
			if len(d.NodeClaims) != 1 || len(d.Existing) != 1 || len(d.Unschedulable) != 1 {
				t.Fatalf("want one of each list, got %s", stdout)
			}
			if e := d.Existing[0]; e.Pod != "web/small" || e.Node != "node-a" {
				t.Errorf("existing %+v, want web/small on node-a", e)
			}
			if u := d.Unschedulable[0]; u.Pod != "web/huge" || !strings.HasPrefix(u.Reason, "nodepool web: ") {
				t.Errorf("unschedulable %+v, want web/huge with a reason naming pool web", u)
			}
			if nc := d.NodeClaims[0]; !slices.Equal(nc.Pods, []string{"web/medium"}) {
				t.Errorf("claim pods %v, want [web/medium]", nc.Pods)
			}
			// Nothing pins the claim to a zone: it may launch in any zone of the pool.
			if nc := d.NodeClaims[0]; !slices.Equal(nc.Zones, []string{"us-east-1a", "us-east-1b", "us-east-1c"}) {
				t.Errorf("claim zones %v, want every default zone", nc.Zones)
			}
		})
	}
}

func TestScheduleUnavailableOfferings(t *testing.T) {
	firstChoices := func(d decision) map[string]int {
		out := map[string]int{}
		for _, nc := range d.NodeClaims {
			if nc.NodePool == "gpu-inference" {
				out[nc.InstanceTypes[0]]++
			}
		}
		return out
	}
	listsIn1a := func(d decision, typ string) int {
		n := 0
		for _, nc := range d.NodeClaims {
			if nc.Zone == "us-east-1a" && slices.Contains(nc.InstanceTypes, typ) {
				n++
			}
		}
		return n
	}
	base, _ := scheduleJSON(t, "--snapshot", example)
	if listsIn1a(base, "g5.12xlarge") == 0 {
		t.Fatal("without --unavailable, no us-east-1a claim lists g5.12xlarge; the test would prove nothing")
	}
	for _, tc := range []struct {
		name        string
		unavailable []string
		gone        []string // listed by no us-east-1a claim
		first       string   // every gpu claim's first choice
	}{
		{"g5.12xlarge short in us-east-1a", []string{"g5.12xlarge:us-east-1a"}, []string{"g5.12xlarge"}, "g6.12xlarge"},
		{"g5.12xlarge on-demand short", []string{"g5.12xlarge:us-east-1a:on-demand"}, []string{"g5.12xlarge"}, "g6.12xlarge"},
		{"the cheapest, g6.12xlarge, short", []string{"g6.12xlarge:us-east-1a"}, []string{"g6.12xlarge"}, "g5.12xlarge"},
		{"both short: the dearest is left", []string{"g6.12xlarge:us-east-1a", "g5.12xlarge:us-east-1a"}, []string{"g5.12xlarge", "g6.12xlarge"}, "g5.24xlarge"},
		{"spot only short: the on-demand pool is unaffected", []string{"g6.12xlarge:us-east-1a:spot"}, nil, "g6.12xlarge"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var args []string
			for _, u := range tc.unavailable {
				args = append(args, "--unavailable", u)
			}
			d, _ := scheduleJSON(t, append([]string{"--snapshot", example}, args...)...)
			for _, typ := range tc.gone {
				if n := listsIn1a(d, typ); n != 0 {
					t.Errorf("%d us-east-1a claims still list %s", n, typ)
				}
			}
			if got := firstChoices(d); len(got) != 1 || got[tc.first] != firstChoices(base)["g6.12xlarge"] {
				t.Errorf("gpu claims' first choices %v, want all %d on %s", got, firstChoices(base)["g6.12xlarge"], tc.first)
			}
			if len(d.Unschedulable) != 0 {
				t.Errorf("unschedulable: %+v", d.Unschedulable)
			}
		})
	}
}

func TestScheduleRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	badCatalogue := writeFile(t, "bad.csv", "name,family\nm6i.large,m6i\n")
	badRow := writeFile(t, "row.csv", strings.Join([]string{
		"name,family,category,generation,size,arch,vcpu,memory_mib,gpu_count,gpu_name,gpu_manufacturer,gpu_memory_mib,accelerator_count,accelerator_name,accelerator_manufacturer,local_nvme_gib,network_bandwidth_mbps,hypervisor,max_enis,ipv4_per_eni,max_pods_eni,on_demand_usd_per_hour_us_east_1",
		"m6i.large,m6i,m,6,large,amd64,two,8192,,,,,,,,,781,nitro,3,10,29,0.096000"}, "\n")+"\n")
	unknownField := writeFile(t, "field.yaml", strings.Replace(mixedSnapshot, "metadata: {name: small, namespace: web}", "metadata: {name: small, namespace: web, labelz: {}}", 1))
	invalid := writeFile(t, "invalid.yaml", strings.Replace(mixedSnapshot, "operator: In", "operator: Within", 1))
	empty := writeFile(t, "empty.yaml", "# kubectl printed nothing\n---\n")
	negative := writeFile(t, "negative.yaml", strings.Replace(mixedSnapshot, `requests: {cpu: "1",`, `requests: {cpu: "-1",`, 1))
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"no command", nil, 2, []string{"usage: stowage"}},
		{"unknown command", []string{"frobnicate"}, 2, []string{`unknown command "frobnicate"`, "usage: stowage"}},
		{"no snapshot", []string{"schedule"}, 2, []string{"--snapshot is required", "examples/2am-spike/snapshot.yaml"}},
		{"unknown flag", []string{"schedule", "--snapshot", example, "--nope"}, 2, []string{"flag provided but not defined: -nope"}},
		{"bad boolean", []string{"schedule", "--snapshot", example, "--json=maybe"}, 2, []string{`invalid boolean value "maybe" for -json`}},
		{"unavailable without a zone", []string{"schedule", "--snapshot", example, "--unavailable", "g5.12xlarge"}, 2,
			[]string{`invalid value "g5.12xlarge" for flag -unavailable`, "TYPE:ZONE"}},
		{"unavailable without a type", []string{"schedule", "--snapshot", example, "--unavailable", ":us-east-1a"}, 2, []string{"-unavailable", "TYPE:ZONE"}},
		{"unavailable with four parts", []string{"schedule", "--snapshot", example, "--unavailable", "a:b:c:d"}, 2, []string{"-unavailable", "TYPE:ZONE"}},
		{"unavailable with an unknown capacity type", []string{"schedule", "--snapshot", example, "--unavailable", "g5.12xlarge:us-east-1a:ondemand"}, 2,
			[]string{"-unavailable", `"ondemand"`, "reserved, spot or on-demand"}},
		{"unavailable type not in the catalogue", []string{"schedule", "--snapshot", example, "--unavailable", "g5.12xlarg:us-east-1a"}, 1,
			[]string{"--unavailable g5.12xlarg:us-east-1a", "no pool offers"}},
		{"unavailable zone no pool uses", []string{"schedule", "--snapshot", example, "--unavailable", "g5.12xlarge:us-east-1z"}, 1,
			[]string{"--unavailable g5.12xlarge:us-east-1z", "no pool offers"}},
		{"missing snapshot file", []string{"schedule", "--snapshot", filepath.Join(dir, "none.yaml")}, 1, []string{"opening --snapshot", "none.yaml"}},
		{"missing catalogue file", []string{"schedule", "--snapshot", example, "--catalogue", filepath.Join(dir, "none.csv")}, 1, []string{"reading --catalogue", "none.csv"}},
		{"catalogue with a bad header", []string{"schedule", "--snapshot", example, "--catalogue", badCatalogue}, 1, []string{"--catalogue " + badCatalogue, "line 1", "wrong number of fields"}},
		{"catalogue with a bad row", []string{"schedule", "--snapshot", example, "--catalogue", badRow}, 1, []string{"--catalogue " + badRow, "line 2", "column vcpu"}},
		{"snapshot with an unknown field", []string{"schedule", "--snapshot", unknownField}, 1,
			[]string{unknownField + ":" + strconv.Itoa(lineOf(mixedSnapshot, "metadata: {name: small, namespace: web}")) + ": Pod web/small: metadata.labelz:", `unknown field "labelz"`}},
		{"snapshot with an invalid pool", []string{"schedule", "--snapshot", invalid}, 1,
			[]string{invalid + ":" + strconv.Itoa(lineOf(mixedSnapshot, "operator: In")) + ": NodePool web: spec.template.spec.requirements[0].operator:", `"Within"`}},
		{"empty snapshot", []string{"schedule", "--snapshot", empty}, 1, []string{empty + ": the snapshot holds no objects"}},
		{"snapshot with a negative request", []string{"schedule", "--snapshot", negative}, 1,
			[]string{negative + ":" + strconv.Itoa(lineOf(mixedSnapshot, `requests: {cpu: "1",`)) + ": Pod web/small: spec.containers[0].resources.requests[cpu]: Invalid value: \"-1\": must be greater than or equal to 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := stowage(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %.200q..., want nothing", stdout)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not say %q", stderr, w)
				}
			}
		})
	}
}

// lineOf is the line, from 1, of the first line of text containing s.
func lineOf(text, s string) int {
	for i, line := range strings.Split(text, "\n") {
		if strings.Contains(line, s) {
			return i + 1
		}
	}
	return 0
}

func TestScheduleWithACustomCatalogue(t *testing.T) {
	data, err := os.ReadFile("../../catalogue/data/ec2-instance-types.csv")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if i == 0 || strings.HasPrefix(line, "m6i.2xlarge,") || strings.HasPrefix(line, "m6i.4xlarge,") {
			rows = append(rows, line)
		}
	}
	csv := writeFile(t, "two.csv", strings.Join(rows, "\n")+"\n")
	d, _ := scheduleJSON(t, "--snapshot", writeFile(t, "mixed.yaml", mixedSnapshot), "--catalogue", csv)
	for _, nc := range d.NodeClaims {
		for _, it := range nc.InstanceTypes {
			if it != "m6i.2xlarge" && it != "m6i.4xlarge" {
				t.Errorf("claim %s lists %s, which the catalogue does not have", nc.Name, it)
			}
		}
	}
	if len(d.NodeClaims) != 1 || d.NodeClaims[0].InstanceTypes[0] != "m6i.2xlarge" {
		t.Errorf("claims %+v, want one on m6i.2xlarge first", d.NodeClaims)
	}
}

func TestHelp(t *testing.T) {
	code, stdout, stderr := stowage(t, "help")
	if code != 0 || !strings.Contains(stdout, "schedule") || stderr != "" {
		t.Errorf("help: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
