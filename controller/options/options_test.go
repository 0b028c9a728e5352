package options_test

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stowage-dev/stowage/controller/options"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestParseDefaultsAndPrecedence(t *testing.T) {
	o, err := options.Parse([]string{"--cluster-name", "flag-cluster", "--batch-idle-duration=2s"},
		env(map[string]string{"CLUSTER_NAME": "env-cluster", "BATCH_MAX_DURATION": "20s", "LEADER_ELECT": "false"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.ClusterName != "flag-cluster" {
		t.Errorf("ClusterName = %q: a flag must win over its environment variable", o.ClusterName)
	}
	if o.BatchIdle != 2*time.Second || o.BatchMax != 20*time.Second {
		t.Errorf("batch window = %s/%s, want 2s/20s", o.BatchIdle, o.BatchMax)
	}
	if o.LeaderElect {
		t.Error("LEADER_ELECT=false did not disable leader election")
	}
	if o.MetricsAddr != ":8080" || o.HealthAddr != ":8081" {
		t.Errorf("addresses = %s %s, want the defaults :8080 :8081", o.MetricsAddr, o.HealthAddr)
	}
	if o.LeaseDuration+o.RetryPeriod >= 15*time.Second {
		t.Errorf("default failover bound %s is not under 15s", o.LeaseDuration+o.RetryPeriod)
	}
}

func TestParseErrorsNameTheFlag(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want []string
	}{
		{"cluster name missing", nil, nil, []string{"--cluster-name", "CLUSTER_NAME"}},
		{"endpoint not https", []string{"--cluster-name=c", "--cluster-endpoint=http://x"}, nil, []string{"--cluster-endpoint", "https"}},
		{"bad cidr", []string{"--cluster-name=c", "--cluster-cidr=10.0.0.0"}, nil, []string{"--cluster-cidr"}},
		{"bad duration from env", []string{"--cluster-name=c"}, map[string]string{"BATCH_IDLE_DURATION": "soon"}, []string{"BATCH_IDLE_DURATION", "--batch-idle-duration", "10s"}},
		{"batch max below idle", []string{"--cluster-name=c", "--batch-idle-duration=5s", "--batch-max-duration=1s"}, nil, []string{"--batch-max-duration"}},
		{"solve time bound not positive", []string{"--cluster-name=c", "--solve-time-bound=0s"}, nil, []string{"--solve-time-bound", "must be positive"}},
		{"lease shorter than renew", []string{"--cluster-name=c", "--leader-election-lease-duration=5s"}, nil, []string{"--leader-election-lease-duration"}},
		{"bad log level", []string{"--cluster-name=c", "--log-level=loud"}, nil, []string{"--log-level", "debug"}},
		{"bad metrics address", []string{"--cluster-name=c", "--metrics-bind-address=8080"}, nil, []string{"--metrics-bind-address", ":8080"}},
		{"burst below qps", []string{"--cluster-name=c", "--kube-client-qps=50", "--kube-client-burst=10"}, nil, []string{"--kube-client-burst"}},
		{"savings share of 1 or more", []string{"--cluster-name=c", "--consolidation-min-savings=1.5"}, nil, []string{"--consolidation-min-savings", "0.15"}},
		{"positional argument", []string{"--cluster-name=c", "extra"}, nil, []string{"extra"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := options.Parse(tc.args, env(tc.env), io.Discard)
			if err == nil {
				t.Fatal("Parse accepted bad input")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestPreferencePolicy(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want scheduler.PreferencePolicy
	}{
		{"default", nil, nil, scheduler.PreferencesCostAware},
		{"Karpenter's variable and spelling", nil, map[string]string{"PREFERENCE_POLICY": "Respect"}, scheduler.PreferencesRespect},
		{"the flag wins over the variable", []string{"--preferences=ignore"}, map[string]string{"PREFERENCE_POLICY": "Respect"}, scheduler.PreferencesIgnore},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := options.Parse(append([]string{"--cluster-name=c"}, tc.args...), env(tc.env), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if o.Preferences != tc.want {
				t.Errorf("Preferences = %q, want %q", o.Preferences, tc.want)
			}
		})
	}
	o, err := options.Parse([]string{"--cluster-name=c"}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	o.Preferences = "sometimes"
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), `--preferences: "sometimes" is not a preference policy: use respect, ignore or cost-aware`) {
		t.Errorf("Validate() = %v, want it to name --preferences and the valid values", err)
	}
}

func TestKarpenterLabelsAreOnUnlessTurnedOff(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want bool
	}{
		{nil, nil, true},
		{[]string{"--karpenter-labels=false"}, nil, false},
		{nil, map[string]string{"KARPENTER_LABELS": "false"}, false},
		{[]string{"--karpenter-labels=true"}, map[string]string{"KARPENTER_LABELS": "false"}, true},
	} {
		o, err := options.Parse(append([]string{"--cluster-name=c"}, tc.args...), env(tc.env), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if o.KarpenterLabels != tc.want {
			t.Errorf("flags %v, env %v: KarpenterLabels = %t, want %t", tc.args, tc.env, o.KarpenterLabels, tc.want)
		}
	}
	if _, err := options.Parse([]string{"--cluster-name=c"}, env(map[string]string{"KARPENTER_LABELS": "sometimes"}), io.Discard); err == nil ||
		!strings.Contains(err.Error(), "KARPENTER_LABELS") || !strings.Contains(err.Error(), "true or false") {
		t.Errorf("KARPENTER_LABELS=sometimes: error %v, want one naming the variable and the values", err)
	}
}
