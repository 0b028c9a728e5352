package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/capacitybuffer"
	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/manifest"
	"github.com/stowage-dev/stowage/controller/options"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/snapshotfile"
)

type scheduleFlags struct {
	snapshot, catalogue string
	json                bool
	preferences         scheduler.PreferencePolicy
	karpenterLabels     bool
	unavailable         offeringList
}

// offeringList collects repeated --unavailable TYPE:ZONE[:CAPACITY-TYPE] flags.
type offeringList []snapshotfile.Offering

func (l *offeringList) String() string { return fmt.Sprint(*l) }

func (l *offeringList) Set(v string) error {
	parts := strings.Split(v, ":")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
		return errors.New("want TYPE:ZONE or TYPE:ZONE:CAPACITY-TYPE, e.g. g5.12xlarge:us-east-1a:on-demand")
	}
	o := snapshotfile.Offering{InstanceType: parts[0], Zone: parts[1]}
	if len(parts) == 3 {
		if !slices.Contains(v1alpha1.CapacityTypes, parts[2]) {
			return fmt.Errorf("capacity type %q is not reserved, spot or on-demand", parts[2])
		}
		o.CapacityType = parts[2]
	}
	*l = append(*l, o)
	return nil
}

func runSchedule(args []string, stdout, stderr io.Writer) int {
	var f scheduleFlags
	fs := flag.NewFlagSet("schedule", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.snapshot, "snapshot", "", "multi-document YAML of Pods, Nodes, DaemonSets, PVCs, PVs, StorageClasses, NodePools, NodeClasses, NodeClaims, and Karpenter's NodePools, EC2NodeClasses and NodeClaims (required)")
	fs.StringVar(&f.catalogue, "catalogue", "", "instance catalogue CSV in the built-in format (default: the built-in catalogue)")
	fs.BoolVar(&f.json, "json", false, "print the decision as JSON (schema in docs/guides/schedule.md)")
	checkPreferences := options.PreferenceFlags(fs, &f.preferences, true, stderr)
	fs.BoolVar(&f.karpenterLabels, "karpenter-labels", true, "as stowage run's flag: new nodes carry Karpenter's selector labels, so pods' Karpenter keys read as Stowage's")
	fs.Var(&f.unavailable, "unavailable", "mark an offering short of capacity, TYPE:ZONE[:CAPACITY-TYPE] (repeatable)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := checkPreferences(); err != nil {
		fmt.Fprintf(stderr, "stowage schedule: %v\n", err)
		return 2
	}
	if f.snapshot == "" {
		fmt.Fprintln(stderr, "stowage schedule: --snapshot is required: name a YAML file, e.g. --snapshot examples/2am-spike/snapshot.yaml")
		return 2
	}
	snap, buffers, err := loadSnapshot(f, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "stowage schedule: %v\n", err)
		return 1
	}
	// As the provisioner decides: the buffers' room and the pools' floors too.
	results := scheduler.Solve(snap, scheduler.Options{Preferences: f.preferences, NoKarpenterLabels: !f.karpenterLabels, FillFloors: true})
	if f.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(newDecisionJSON(results, buffers)); err != nil {
			fmt.Fprintf(stderr, "stowage schedule: writing JSON: %v\n", err)
			return 1
		}
		return 0
	}
	printDecision(stdout, results)
	printBuffers(stdout, results, buffers)
	return 0
}

func loadSnapshot(f scheduleFlags, stderr io.Writer) (*scheduler.Snapshot, []capacitybuffer.Outcome, error) {
	infos := catalogue.Builtin()
	if f.catalogue != "" {
		data, err := os.ReadFile(f.catalogue)
		if err != nil {
			return nil, nil, fmt.Errorf("reading --catalogue: %w", err)
		}
		if infos, err = catalogue.Parse(string(data)); err != nil {
			return nil, nil, fmt.Errorf("--catalogue %s: %w", f.catalogue, err)
		}
	}
	file, err := os.Open(f.snapshot)
	if err != nil {
		return nil, nil, fmt.Errorf("opening --snapshot: %w", err)
	}
	defer file.Close()
	objs, err := snapshotfile.Read(file)
	if err != nil {
		return nil, nil, fileError(f.snapshot, err)
	}
	printWarnings(stderr, f.snapshot, objs.Warnings)
	snap := objs.Snapshot(snapshotfile.Options{Infos: infos, Defaults: catalogue.DefaultOptions(), Unavailable: f.unavailable})
	buffers, err := objs.Buffers(context.Background())
	if err != nil {
		return nil, nil, fileError(f.snapshot, err)
	}
	snap.Bookings = capacitybuffer.Bookings(buffers)
	for _, u := range f.unavailable {
		if !offered(snap, u) {
			return nil, nil, fmt.Errorf("--unavailable %s:%s: no pool offers %s in %s; check the instance type and the zone", u.InstanceType, u.Zone, u.InstanceType, u.Zone)
		}
	}
	return snap, buffers, nil
}

// fileError names the file in err: on every line-numbered error it holds
// ("FILE:LINE: ..."), or before it.
func fileError(name string, err error) error {
	var me *manifest.Error
	if errors.As(err, &me) {
		return manifest.InFile(name, err)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// offered reports whether some pool's instance types have an offering u names, so
// that a mistyped --unavailable is an error rather than a silent no-op.
func offered(snap *scheduler.Snapshot, u snapshotfile.Offering) bool {
	for _, types := range snap.InstanceTypes {
		for _, it := range types {
			for _, o := range it.Offerings {
				if it.Name == u.InstanceType && o.Zone == u.Zone && (u.CapacityType == "" || u.CapacityType == o.CapacityType) {
					return true
				}
			}
		}
	}
	return false
}

// decisionJSON is the --json schema, documented in docs/guides/schedule.md.
type decisionJSON struct {
	NodeClaims    []nodeClaimJSON     `json:"nodeClaims"`
	Existing      []placementJSON     `json:"existing"`
	Unschedulable []unschedulableJSON `json:"unschedulable"`
	Buffers       []bufferJSON        `json:"buffers"`
	Totals        totalsJSON          `json:"totals"`
}

type nodeClaimJSON struct {
	Name          string              `json:"name"`
	NodePool      string              `json:"nodePool"`
	Zone          string              `json:"zone"`
	Zones         []string            `json:"zones"`
	CapacityType  string              `json:"capacityType"`
	InstanceTypes []string            `json:"instanceTypes"`
	PricePerHour  float64             `json:"pricePerHour"`
	Requests      corev1.ResourceList `json:"requests"`
	Pods          []string            `json:"pods"`
}

type placementJSON struct {
	Pod  string `json:"pod"`
	Node string `json:"node"`
}

type unschedulableJSON struct {
	Pod    string `json:"pod"`
	Reason string `json:"reason"`
}

type totalsJSON struct {
	NodeClaims        int     `json:"nodeClaims"`
	PricePerHour      float64 `json:"pricePerHour"`
	PodsOnNewNodes    int     `json:"podsOnNewNodes"`
	PodsOnExisting    int     `json:"podsOnExisting"`
	PodsUnschedulable int     `json:"podsUnschedulable"`
}

func podName(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }

func newDecisionJSON(r *scheduler.Results, buffers []capacitybuffer.Outcome) decisionJSON {
	d := decisionJSON{NodeClaims: []nodeClaimJSON{}, Existing: []placementJSON{}, Unschedulable: []unschedulableJSON{},
		Buffers: buffersJSON(r, buffers)}
	for _, nc := range r.NewNodeClaims {
		j := nodeClaimJSON{Name: nc.Name, NodePool: nc.NodePool, Zone: nc.Offering.Zone, CapacityType: nc.Offering.CapacityType,
			Zones: claimZones(nc), PricePerHour: nc.Price(), Requests: nc.Requests.List()}
		for _, it := range nc.InstanceTypes {
			j.InstanceTypes = append(j.InstanceTypes, it.Name)
		}
		for _, p := range nc.Pods {
			j.Pods = append(j.Pods, podName(p))
		}
		d.NodeClaims = append(d.NodeClaims, j)
		d.Totals.PodsOnNewNodes += len(nc.Pods)
	}
	for _, pl := range r.Existing {
		d.Existing = append(d.Existing, placementJSON{Pod: podName(pl.Pod), Node: pl.Node})
	}
	for _, u := range r.Unschedulable {
		d.Unschedulable = append(d.Unschedulable, unschedulableJSON{Pod: podName(u.Pod), Reason: u.Reason})
	}
	d.Totals.NodeClaims, d.Totals.PricePerHour = len(r.NewNodeClaims), r.TotalPrice()
	d.Totals.PodsOnExisting, d.Totals.PodsUnschedulable = len(r.Existing), len(r.Unschedulable)
	return d
}

func printDecision(w io.Writer, r *scheduler.Results) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "NEW NODECLAIM\tNODEPOOL\tZONE\tCAPACITY\tINSTANCE TYPES (cheapest first)\t$/HOUR\tPODS\n")
	for _, nc := range r.NewNodeClaims {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.4f\t%d\n", nc.Name, nc.NodePool, nc.Offering.Zone, nc.Offering.CapacityType,
			typeList(nc), nc.Price(), len(nc.Pods))
	}
	_ = tw.Flush()
	if len(r.Existing) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintf(tw, "POD ON EXISTING CAPACITY\tNODE\n")
		for _, pl := range r.Existing {
			fmt.Fprintf(tw, "%s\t%s\n", podName(pl.Pod), pl.Node)
		}
		_ = tw.Flush()
	}
	if len(r.Unschedulable) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintf(tw, "UNSCHEDULABLE POD\tREASON\n")
		for _, u := range r.Unschedulable {
			fmt.Fprintf(tw, "%s\t%s\n", podName(u.Pod), u.Reason)
		}
		_ = tw.Flush()
	}
	fmt.Fprintf(w, "\n%d new nodeclaims at $%.4f/hour; %d pods on new nodes, %d on existing capacity, %d unschedulable\n",
		len(r.NewNodeClaims), r.TotalPrice(), r.PodCount()-len(r.Existing), len(r.Existing), len(r.Unschedulable))
}

// claimZones lists, sorted, every zone where one of the claim's instance types has
// an available offering its requirements allow: where the launch may land.
func claimZones(nc *scheduler.NewNodeClaim) []string {
	zones := []string{}
	for _, it := range nc.InstanceTypes {
		for _, o := range it.Offerings.Available().Compatible(nc.Requirements) {
			if !slices.Contains(zones, o.Zone) {
				zones = append(zones, o.Zone)
			}
		}
	}
	slices.Sort(zones)
	return zones
}

// typeList shows the first few fallbacks and how many more there are.
func typeList(nc *scheduler.NewNodeClaim) string {
	const shown = 3
	var names []string
	for i, it := range nc.InstanceTypes {
		if i == shown {
			names = append(names, fmt.Sprintf("(+%d more)", len(nc.InstanceTypes)-shown))
			break
		}
		names = append(names, it.Name)
	}
	return strings.Join(names, ", ")
}
