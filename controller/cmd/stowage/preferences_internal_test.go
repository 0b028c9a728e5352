package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// The one --preferences flag, on the three commands that solve.

const preferencesExample = "../../../examples/preferences/snapshot.yaml"

func TestSchedulePreferencesFlag(t *testing.T) {
	outcomes := map[string]decision{}
	for _, policy := range []string{"respect", "ignore", "cost-aware"} {
		d, _ := scheduleJSON(t, "--snapshot", preferencesExample, "--preferences="+policy)
		if d.Totals.PodsOnNewNodes != pendingPods(t, preferencesExample) {
			t.Errorf("--preferences=%s placed %d pods, want all %d", policy, d.Totals.PodsOnNewNodes, pendingPods(t, preferencesExample))
		}
		outcomes[policy] = d
	}
	respect, ignore, costAware := outcomes["respect"].Totals, outcomes["ignore"].Totals, outcomes["cost-aware"].Totals
	if respect.NodeClaims != respect.PodsOnNewNodes {
		t.Errorf("respect launched %d claims for %d pods, want one per pod (Karpenter's decision)", respect.NodeClaims, respect.PodsOnNewNodes)
	}
	if ignore.NodeClaims >= respect.NodeClaims || costAware.PricePerHour > ignore.PricePerHour*1.1 {
		t.Errorf("claims and $/hour: respect %d %.4f, ignore %d %.4f, cost-aware %d %.4f", respect.NodeClaims, respect.PricePerHour,
			ignore.NodeClaims, ignore.PricePerHour, costAware.NodeClaims, costAware.PricePerHour)
	}
	_, byDefault := scheduleJSON(t, "--snapshot", preferencesExample)
	_, explicit := scheduleJSON(t, "--snapshot", preferencesExample, "--preferences=cost-aware")
	if byDefault != explicit {
		t.Error("the default decision differs from --preferences=cost-aware")
	}
}

func TestScheduleIgnorePreferencesIsADeprecatedAlias(t *testing.T) {
	_, want := scheduleJSON(t, "--snapshot", preferencesExample, "--preferences=ignore")
	code, stdout, stderr := stowage(t, "schedule", "--json", "--snapshot", preferencesExample, "--ignore-preferences")
	if code != 0 || stdout != want {
		t.Errorf("--ignore-preferences: exit %d, and the decision differs from --preferences=ignore's", code)
	}
	if !strings.Contains(stderr, "--ignore-preferences is deprecated: use --preferences=ignore") {
		t.Errorf("stderr %q does not warn of the deprecation", stderr)
	}
}

func TestPreferencesFlagRefusesBadValues(t *testing.T) {
	scenario := writeFile(t, "scenario.yaml", preferenceScenario)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"schedule: unknown policy", []string{"schedule", "--snapshot", preferencesExample, "--preferences=loose"},
			[]string{`invalid value "loose" for flag -preferences`, "use respect, ignore or cost-aware"}},
		{"schedule: the alias contradicts the flag", []string{"schedule", "--snapshot", preferencesExample, "--ignore-preferences", "--preferences=respect"},
			[]string{"--ignore-preferences contradicts --preferences=respect"}},
		{"simulate: unknown policy", []string{"simulate", "--scenario", scenario, "--preferences=karpenter"},
			[]string{`invalid value "karpenter" for flag -preferences`, "use respect, ignore or cost-aware"}},
		{"run: unknown policy", []string{"run", "--cluster-name=c", "--region=us-east-1", "--preferences=strict"},
			[]string{`invalid value "strict" for flag -preferences`, "use respect, ignore or cost-aware"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := stowage(t, tc.args...)
			if code != 2 || stdout != "" {
				t.Errorf("exit %d, stdout %q; want 2 and nothing", code, stdout)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not say %q", stderr, w)
				}
			}
		})
	}
}

func TestRunReadsThePreferencePolicy(t *testing.T) {
	// A bad PREFERENCE_POLICY names the variable and the flag; the help
	// lists both (options_test covers the values and their precedence).
	var stderr bytes.Buffer
	code := runControllerUntil(t.Context(), []string{"--cluster-name=c", "--region=us-east-1"}, env(map[string]string{"PREFERENCE_POLICY": "Sometimes"}), &stderr)
	if code != exitBadArgs || !strings.Contains(stderr.String(), "environment variable PREFERENCE_POLICY (flag --preferences)") {
		t.Errorf("exit %d, stderr %q; want 2 naming PREFERENCE_POLICY and --preferences", code, stderr.String())
	}
	stderr.Reset()
	if code := runControllerUntil(t.Context(), []string{"-h"}, env(nil), &stderr); code != exitOK || !strings.Contains(stderr.String(), "-preferences") ||
		!strings.Contains(stderr.String(), "env PREFERENCE_POLICY") {
		t.Errorf("help (exit %d) does not list --preferences and PREFERENCE_POLICY:\n%s", code, stderr.String())
	}
}

// preferenceScenario scales a Deployment to 6 replicas that prefer a node
// each, on a pool of c6i types.
const preferenceScenario = `apiVersion: simulate.stowage.dev/v1alpha1
kind: Scenario
metadata:
  name: preferences
spec:
  duration: 20m
  seed: 5
  workloads:
    - deployment: web
      replicas:
        - {at: 0s, count: 6}
---
apiVersion: stowage.dev/v1alpha1
kind: NodeClass
metadata:
  name: web
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: NodeRole
  subnetSelectorTerms: [{tags: {stowage.dev/discovery: preferences}}]
  securityGroupSelectorTerms: [{tags: {stowage.dev/discovery: preferences}}]
---
apiVersion: stowage.dev/v1alpha1
kind: NodePool
metadata:
  name: web
spec:
  template:
    spec:
      nodeClassRef: {group: stowage.dev, kind: NodeClass, name: web}
      requirements:
        - {key: stowage.dev/instance-family, operator: In, values: [c6i]}
        - {key: stowage.dev/capacity-type, operator: In, values: [on-demand]}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 100
              podAffinityTerm:
                topologyKey: kubernetes.io/hostname
                labelSelector: {matchLabels: {app: web}}
      containers:
        - name: api
          image: registry.example.com/web-api:1.42
          resources:
            requests: {cpu: 500m, memory: 1Gi}
`

func TestSimulatePreferencesFlag(t *testing.T) {
	scenario := writeFile(t, "scenario.yaml", preferenceScenario)
	launched := map[string]int{}
	for _, policy := range []string{"respect", "ignore"} {
		code, stdout, stderr := stowage(t, "simulate", "--scenario", scenario, "--json", "--preferences="+policy)
		if code != 0 {
			t.Fatalf("--preferences=%s: exit %d, stderr %q", policy, code, stderr)
		}
		var rep struct {
			Systems []struct {
				NodesLaunched int `json:"nodes_launched"`
			} `json:"systems"`
		}
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil || len(rep.Systems) != 1 {
			t.Fatalf("--preferences=%s: decoding the report: %v\n%s", policy, err, stdout)
		}
		launched[policy] = rep.Systems[0].NodesLaunched
	}
	if launched["respect"] != 6 || launched["ignore"] >= launched["respect"] {
		t.Errorf("nodes launched %v: respect should give each replica a node, ignore pack them", launched)
	}
}
