// Package options holds the controller's settings: flags with environment
// fallbacks, validated once at start with messages that name the flag and the fix.
package options

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// Options configures `stowage run`.
type Options struct {
	ClusterName     string
	ClusterEndpoint string
	// ClusterCABundle is the API server's CA, base64 PEM, for node bootstrap.
	ClusterCABundle string
	// ClusterCIDR is the cluster's service CIDR, from which nodes derive
	// their cluster DNS; when empty, `stowage run` reads it from
	// eks:DescribeCluster (ServiceCIDR) and refuses to start without one.
	ClusterCIDR string
	Region      string

	MetricsAddr string
	HealthAddr  string

	LeaderElect             bool
	LeaderElectionNamespace string
	LeaderElectionName      string
	// LeaseDuration, RenewDeadline and RetryPeriod bound failover: a standby
	// takes over at most LeaseDuration + RetryPeriod after the leader stops renewing.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration

	// BatchIdle closes a provisioning batch when no pod arrives for this long;
	// BatchMax closes it regardless.
	BatchIdle, BatchMax time.Duration
	// SolveTimeBound bounds each batch's solve: the pods not tried by then,
	// the lowest priorities, wait for the next batch.
	SolveTimeBound time.Duration

	KubeAPIQPS   float64
	KubeAPIBurst int

	// Preferences is how the solver treats soft constraints; the disruption
	// simulation and the Terraform plan data source read the same setting.
	Preferences scheduler.PreferencePolicy
	// SpotToSpotConsolidation lets consolidation replace spot nodes with
	// cheaper spot nodes (off, as in Karpenter; see docs/guides/disruption.md).
	SpotToSpotConsolidation bool
	// ConsolidationMinSavings is the share of a node's price a replacement
	// must save; ConsolidationRecentWindow how long a node a disruption
	// launched is left alone.
	ConsolidationMinSavings   float64
	ConsolidationRecentWindow time.Duration

	LogLevel  string
	LogFormat string

	// KarpenterLabels puts Karpenter's copies of the selector labels
	// (karpenter.sh/capacity-type, karpenter.k8s.aws/instance-*) on the nodes
	// Stowage launches, and reads pods' Karpenter keys as Stowage's; never
	// Karpenter's ownership markers. On by default.
	KarpenterLabels bool

	// DryRun watches and decides but acts on nothing: no NodeClaim is
	// created, no EC2 or IAM call that changes the account is made, no node
	// is disrupted; the decisions are logged, counted and told in events.
	DryRun bool
}

// flagSpec is one flag: its name, environment variable, and where it goes.
type flagSpec struct {
	name, env, usage string
	value            flag.Value
}

// Parse reads flags, then fills what no flag set from the environment (getenv),
// then applies defaults, then validates.
func Parse(args []string, getenv func(string) string, stderr io.Writer) (*Options, error) {
	o := defaults()
	fs := flag.NewFlagSet("stowage run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	specs := o.specs()
	for _, s := range specs {
		fs.Var(s.value, s.name, fmt.Sprintf("%s (env %s)", s.usage, s.env))
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q: `stowage run` takes flags only", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, s := range specs {
		v := getenv(s.env)
		if set[s.name] || v == "" {
			continue
		}
		if err := s.value.Set(v); err != nil {
			return nil, fmt.Errorf("environment variable %s (flag --%s): %w", s.env, s.name, err)
		}
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return o, nil
}

func defaults() *Options {
	return &Options{
		MetricsAddr:        ":8080",
		HealthAddr:         ":8081",
		LeaderElect:        true,
		LeaderElectionName: "stowage-leader-election",
		LeaseDuration:      10 * time.Second,
		RenewDeadline:      7 * time.Second,
		RetryPeriod:        2 * time.Second,
		BatchIdle:          time.Second,
		BatchMax:           10 * time.Second,
		SolveTimeBound:     5 * time.Second,
		KubeAPIQPS:         200,
		KubeAPIBurst:       300,
		Preferences:        scheduler.DefaultPreferencePolicy,
		KarpenterLabels:    true,
		// Mirror disruption.DefaultMinSavingsShare and DefaultRecentWindow.
		ConsolidationMinSavings:   0.15,
		ConsolidationRecentWindow: 30 * time.Minute,
		LogLevel:                  "info",
		LogFormat:                 "json",
	}
}

func (o *Options) specs() []flagSpec {
	return []flagSpec{
		{"cluster-name", "CLUSTER_NAME", "EKS cluster name; tags instances kubernetes.io/cluster/<name>", (*stringValue)(&o.ClusterName)},
		{"cluster-endpoint", "CLUSTER_ENDPOINT", "API server URL nodes join", (*stringValue)(&o.ClusterEndpoint)},
		{"cluster-ca-bundle", "CLUSTER_CA_BUNDLE", "API server CA (base64 PEM) for node bootstrap", (*stringValue)(&o.ClusterCABundle)},
		{"cluster-cidr", "CLUSTER_CIDR", "the cluster's service CIDR, from which nodes derive their cluster DNS (read from eks:DescribeCluster when unset)", (*stringValue)(&o.ClusterCIDR)},
		{"region", "AWS_REGION", "AWS region", (*stringValue)(&o.Region)},
		{"metrics-bind-address", "METRICS_BIND_ADDRESS", "Prometheus metrics address", (*stringValue)(&o.MetricsAddr)},
		{"health-probe-bind-address", "HEALTH_PROBE_BIND_ADDRESS", "health and readiness address", (*stringValue)(&o.HealthAddr)},
		{"leader-elect", "LEADER_ELECT", "elect a leader on a Lease so that replicas take turns", (*boolValue)(&o.LeaderElect)},
		{"leader-election-namespace", "LEADER_ELECTION_NAMESPACE", "namespace of the Lease (the pod's own when empty)", (*stringValue)(&o.LeaderElectionNamespace)},
		{"leader-election-name", "LEADER_ELECTION_NAME", "name of the Lease", (*stringValue)(&o.LeaderElectionName)},
		{"leader-election-lease-duration", "LEADER_ELECTION_LEASE_DURATION", "how long a lease lasts unrenewed", (*durationValue)(&o.LeaseDuration)},
		{"leader-election-renew-deadline", "LEADER_ELECTION_RENEW_DEADLINE", "how long the leader retries renewing before it gives up", (*durationValue)(&o.RenewDeadline)},
		{"leader-election-retry-period", "LEADER_ELECTION_RETRY_PERIOD", "how often candidates try to acquire the lease", (*durationValue)(&o.RetryPeriod)},
		{"batch-idle-duration", "BATCH_IDLE_DURATION", "close a provisioning batch after this long without a new pod", (*durationValue)(&o.BatchIdle)},
		{"batch-max-duration", "BATCH_MAX_DURATION", "close a provisioning batch after this long at most", (*durationValue)(&o.BatchMax)},
		{"solve-time-bound", "SOLVE_TIME_BOUND", "stop a batch's solve after this long; it places the highest-priority pods first, and the rest wait for the next batch", (*durationValue)(&o.SolveTimeBound)},
		{"spot-to-spot-consolidation", "SPOT_TO_SPOT_CONSOLIDATION", "let consolidation replace spot nodes with cheaper spot nodes (needs 15 cheaper spot types)", (*boolValue)(&o.SpotToSpotConsolidation)},
		{"consolidation-min-savings", "CONSOLIDATION_MIN_SAVINGS", "share of the candidate nodes' price a consolidation replacement must save in a pool that sets no spec.disruption.consolidationMinSavings, 0 to 1", (*floatValue)(&o.ConsolidationMinSavings)},
		{"consolidation-recent-window", "CONSOLIDATION_RECENT_WINDOW", "how long a node launched by a disruption is not consolidated", (*durationValue)(&o.ConsolidationRecentWindow)},
		{"kube-client-qps", "KUBE_CLIENT_QPS", "API server requests per second", (*floatValue)(&o.KubeAPIQPS)},
		{"kube-client-burst", "KUBE_CLIENT_BURST", "API server request burst", (*intValue)(&o.KubeAPIBurst)},
		{"preferences", "PREFERENCE_POLICY", PreferencesUsage, &o.Preferences},
		{"log-level", "LOG_LEVEL", "trace, debug, info, warn or error", (*stringValue)(&o.LogLevel)},
		{"log-format", "LOG_FORMAT", "json or text", (*stringValue)(&o.LogFormat)},
		{"dry-run", "DRY_RUN", "watch, decide and report (logs, events, metrics) without launching, deleting or disrupting anything", (*boolValue)(&o.DryRun)},
		{"karpenter-labels", "KARPENTER_LABELS", "put Karpenter's selector labels (karpenter.sh/capacity-type, karpenter.k8s.aws/instance-*) on new nodes too, and read pods' Karpenter keys as Stowage's", (*boolValue)(&o.KarpenterLabels)},
	}
}

// Validate checks every setting and reports each problem with its flag and fix.
func (o *Options) Validate() error {
	var errs []error
	bad := func(flagName, format string, args ...any) {
		errs = append(errs, fmt.Errorf("--%s: %s", flagName, fmt.Sprintf(format, args...)))
	}
	if o.ClusterName == "" {
		bad("cluster-name", "required: set it (or CLUSTER_NAME) to the EKS cluster's name")
	}
	if o.ClusterEndpoint != "" {
		if u, err := url.Parse(o.ClusterEndpoint); err != nil || u.Scheme != "https" || u.Host == "" {
			bad("cluster-endpoint", "%q is not an https URL: use the cluster's endpoint, e.g. https://ABCD.gr7.us-east-1.eks.amazonaws.com", o.ClusterEndpoint)
		}
	}
	if _, _, err := net.ParseCIDR(o.ClusterCIDR); err != nil && o.ClusterCIDR != "" {
		bad("cluster-cidr", "%q is not a CIDR: use the cluster's service CIDR (aws eks describe-cluster --query cluster.kubernetesNetworkConfig), e.g. 10.100.0.0/16", o.ClusterCIDR)
	}
	for _, a := range [][2]string{{"metrics-bind-address", o.MetricsAddr}, {"health-probe-bind-address", o.HealthAddr}} {
		if _, _, err := net.SplitHostPort(a[1]); err != nil && a[1] != "0" {
			bad(a[0], "%q is not host:port: use e.g. :8080, or 0 to disable", a[1])
		}
	}
	if o.LeaderElect {
		if o.LeaseDuration <= o.RenewDeadline {
			bad("leader-election-lease-duration", "%s must exceed --leader-election-renew-deadline (%s)", o.LeaseDuration, o.RenewDeadline)
		}
		if o.RenewDeadline <= o.RetryPeriod {
			bad("leader-election-renew-deadline", "%s must exceed --leader-election-retry-period (%s)", o.RenewDeadline, o.RetryPeriod)
		}
		if o.RetryPeriod <= 0 {
			bad("leader-election-retry-period", "must be positive, e.g. 2s")
		}
		if o.LeaderElectionName == "" {
			bad("leader-election-name", "required when --leader-elect is true")
		}
	}
	if o.BatchIdle <= 0 {
		bad("batch-idle-duration", "must be positive, e.g. 1s")
	}
	if o.BatchMax < o.BatchIdle {
		bad("batch-max-duration", "%s is shorter than --batch-idle-duration (%s): make it at least as long", o.BatchMax, o.BatchIdle)
	}
	if o.SolveTimeBound <= 0 {
		bad("solve-time-bound", "must be positive, e.g. 5s")
	}
	if o.KubeAPIQPS <= 0 {
		bad("kube-client-qps", "must be positive, e.g. 200")
	}
	if o.KubeAPIBurst < int(o.KubeAPIQPS) {
		bad("kube-client-burst", "%d is below --kube-client-qps (%g): make it at least as large", o.KubeAPIBurst, o.KubeAPIQPS)
	}
	if _, err := scheduler.ParsePreferencePolicy(string(o.Preferences)); err != nil {
		bad("preferences", "%v", err)
	}
	if o.ConsolidationMinSavings < 0 || o.ConsolidationMinSavings >= 1 {
		bad("consolidation-min-savings", "%g is not a share: use a number from 0 (any saving) to below 1, e.g. 0.15", o.ConsolidationMinSavings)
	}
	if o.ConsolidationRecentWindow <= 0 {
		bad("consolidation-recent-window", "must be positive, e.g. 30m")
	}
	switch strings.ToLower(o.LogLevel) {
	case "trace", "debug", "info", "warn", "error":
	default:
		bad("log-level", "%q is not a level: use trace, debug, info, warn or error", o.LogLevel)
	}
	if o.LogFormat != "json" && o.LogFormat != "text" {
		bad("log-format", "%q is not a format: use json or text", o.LogFormat)
	}
	return errors.Join(errs...)
}

type stringValue string

func (v *stringValue) String() string     { return string(*v) }
func (v *stringValue) Set(s string) error { *v = stringValue(s); return nil }

type boolValue bool

func (v *boolValue) String() string { return strconv.FormatBool(bool(*v)) }
func (v *boolValue) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("%q is not a boolean: use true or false", s)
	}
	*v = boolValue(b)
	return nil
}
func (v *boolValue) IsBoolFlag() bool { return true }

type durationValue time.Duration

func (v *durationValue) String() string { return time.Duration(*v).String() }
func (v *durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration: use e.g. 500ms, 10s or 2m", s)
	}
	*v = durationValue(d)
	return nil
}

type floatValue float64

func (v *floatValue) String() string { return strconv.FormatFloat(float64(*v), 'g', -1, 64) }
func (v *floatValue) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("%q is not a number", s)
	}
	*v = floatValue(f)
	return nil
}

type intValue int

func (v *intValue) String() string { return strconv.Itoa(int(*v)) }
func (v *intValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%q is not an integer", s)
	}
	*v = intValue(n)
	return nil
}
