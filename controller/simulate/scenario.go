// Package simulate replays a scenario (workloads over time, a capacity model,
// spot interruptions) against the real provisioning and NodeClaim lifecycle
// code on a virtual clock, wired to an in-memory cluster and the AWS emulator's
// capacity model in process, and reports scheduling latency, cost and every
// fallback, side by side with a Cluster Autoscaler model.
package simulate

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	autoscalingv1beta1 "github.com/stowage-dev/stowage/controller/apis/autoscaling/v1beta1"
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/manifest"
)

// ScenarioKind and ScenarioAPIVersion identify the scenario document of a file.
const (
	ScenarioKind       = "Scenario"
	ScenarioAPIVersion = "simulate.stowage.dev/v1alpha1"
)

// Scenario is one file: the timeline document plus the Kubernetes objects it
// replays (the NodePools and NodeClasses the Terraform provider writes, the
// workloads as Deployments, Jobs and DaemonSets, and their
// PodDisruptionBudgets and PriorityClasses).
type Scenario struct {
	Name string
	Spec ScenarioSpec

	NodePools   []*v1alpha1.NodePool
	NodeClasses []*v1alpha1.NodeClass
	Deployments []*appsv1.Deployment
	Jobs        []*batchv1.Job
	DaemonSets  []*appsv1.DaemonSet
	// PodDisruptionBudgets guard the workloads' pods: the simulated API
	// server refuses the evictions they forbid (pdb.go).
	PodDisruptionBudgets []*policyv1.PodDisruptionBudget
	// PriorityClasses give the pods that name them their priority.
	PriorityClasses []*schedulingv1.PriorityClass
	// CapacityBuffers keep room for pods of the PodTemplates (or the
	// Deployments, Jobs) they name, as stowage run keeps it (buffers.go).
	CapacityBuffers []*autoscalingv1beta1.CapacityBuffer
	PodTemplates    []*corev1.PodTemplate

	// Warnings are what converting Karpenter's NodePools and EC2NodeClasses
	// could not carry over, each on its line.
	Warnings []*manifest.Error

	// doc is the Scenario document, where holds every other object, to put
	// validation errors on their lines
	doc   *manifest.Object
	where map[any]*manifest.Object
}

// ScenarioSpec is the timeline.
type ScenarioSpec struct {
	// Duration is how much virtual time to replay.
	Duration metav1.Duration `json:"duration"`
	// Seed drives every random draw (boot times, interruptions, names); --seed overrides it.
	Seed int64 `json:"seed,omitempty"`
	// Region and Zones are the simulated AWS region and its zones.
	Region string   `json:"region,omitempty"`
	Zones  []string `json:"zones,omitempty"`
	// ClusterCIDR is the simulated cluster's service CIDR, which its nodes'
	// user data carries; DefaultClusterCIDR when empty.
	ClusterCIDR string `json:"clusterCIDR,omitempty"`
	// SampleEvery is the report's time-series step; 1m when zero.
	SampleEvery metav1.Duration `json:"sampleEvery,omitempty"`
	// Workloads give each Deployment its replica curve and each Job its start.
	Workloads []Workload `json:"workloads"`
	// Capacity lists shortage windows per offering.
	Capacity []CapacityWindow `json:"capacity,omitempty"`
	// CapacityReservations are the account's reservations and Capacity
	// Blocks (reservations.go).
	CapacityReservations []CapacityReservation `json:"capacityReservations,omitempty"`
	// Interruptions of spot instances.
	Interruptions Interruptions `json:"interruptions,omitempty"`
	// ZoneOutages take whole zones away (zoneoutage.go).
	ZoneOutages []ZoneOutage `json:"zoneOutages,omitempty"`
	// Boot is the time from launch to a Ready node, per AMI family (al2023,
	// bottlerocket); "default" covers the rest.
	Boot map[string]DurationRange `json:"boot,omitempty"`
	// PodStartup is the time from binding to Running.
	PodStartup DurationRange `json:"podStartup,omitempty"`
	// ClusterAutoscaler describes the node groups of the --compare cas baseline.
	ClusterAutoscaler *ClusterAutoscaler `json:"clusterAutoscaler,omitempty"`
}

// Workload names one Deployment or Job of the file and says how it changes.
type Workload struct {
	// Deployment or Job names the object (namespace/name, or name in default).
	Deployment string `json:"deployment,omitempty"`
	Job        string `json:"job,omitempty"`
	// Tier groups workloads in the report; the object's name when empty.
	Tier string `json:"tier,omitempty"`
	// Replicas is a Deployment's curve: each point sets the count at At,
	// reached linearly over Over (a step when Over is zero).
	Replicas []ReplicaPoint `json:"replicas,omitempty"`
	// At is when a Job is created; RunFor how long each of its pods runs.
	At     metav1.Duration `json:"at,omitempty"`
	RunFor metav1.Duration `json:"runFor,omitempty"`
}

// ReplicaPoint is one point of a replica curve.
type ReplicaPoint struct {
	At    metav1.Duration `json:"at"`
	Count int32           `json:"count"`
	Over  metav1.Duration `json:"over,omitempty"`
}

// CapacityWindow sets how many instances one offering can start, from From
// until Until (the end of the run when zero).
type CapacityWindow struct {
	InstanceType string          `json:"instanceType"`
	Zone         string          `json:"zone"`
	CapacityType string          `json:"capacityType"`
	Available    int             `json:"available"`
	From         metav1.Duration `json:"from,omitempty"`
	Until        metav1.Duration `json:"until,omitempty"`
}

// Interruptions are spot interruptions: a rate per spot instance-hour, and
// scripted ones.
type Interruptions struct {
	SpotRatePerHour float64                `json:"spotRatePerHour,omitempty"`
	Scripted        []ScriptedInterruption `json:"scripted,omitempty"`
}

// ScriptedInterruption interrupts the oldest running spot instance matching
// its type and zone (any when empty) at At.
type ScriptedInterruption struct {
	At           metav1.Duration `json:"at"`
	InstanceType string          `json:"instanceType,omitempty"`
	Zone         string          `json:"zone,omitempty"`
}

// DurationRange draws a duration uniformly in [Min, Max].
type DurationRange struct {
	Min metav1.Duration `json:"min"`
	Max metav1.Duration `json:"max"`
}

// ClusterAutoscaler is the baseline's configuration: its node groups, each of
// one instance type.
type ClusterAutoscaler struct {
	NodeGroups []NodeGroup `json:"nodeGroups"`
}

// NodeGroup is one Auto Scaling group as Cluster Autoscaler sees it.
type NodeGroup struct {
	Name         string `json:"name"`
	InstanceType string `json:"instanceType"`
	// InstanceTypes are the types of a mixed-instances group, which launches
	// whichever has capacity, in this order; CA builds its template node
	// from InstanceType. Empty for a group of one type.
	InstanceTypes []string          `json:"instanceTypes,omitempty"`
	Zones         []string          `json:"zones"`
	CapacityType  string            `json:"capacityType,omitempty"`
	Min           int               `json:"min,omitempty"`
	Max           int               `json:"max"`
	Labels        map[string]string `json:"labels,omitempty"`
	Taints        []corev1.Taint    `json:"taints,omitempty"`
	// AMIFamily picks the boot time; al2023 when empty.
	AMIFamily string `json:"amiFamily,omitempty"`
}

// scenarioDocument is the Scenario document as written.
type scenarioDocument struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ScenarioSpec `json:"spec"`
}

// validate checks the timeline and the objects it names; every message names
// the field and the fix.
func (s *Scenario) validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		if s.doc == nil { // built in code rather than read
			errs = append(errs, fmt.Errorf("Scenario %s: spec.%s: %s", s.Name, field, fmt.Sprintf(format, args...)))
			return
		}
		errs = append(errs, s.doc.Errorf("spec."+field, format, args...))
	}
	sp := &s.Spec
	if sp.Duration.Duration <= 0 {
		bad("duration", "must be positive, e.g. 6h")
	}
	if sp.SampleEvery.Duration < 0 {
		bad("sampleEvery", "must not be negative")
	}
	if _, _, err := net.ParseCIDR(sp.ClusterCIDR); err != nil && sp.ClusterCIDR != "" {
		bad("clusterCIDR", "%q is not a CIDR: use the cluster's service CIDR, e.g. 10.100.0.0/16", sp.ClusterCIDR)
	}
	if len(sp.Workloads) == 0 {
		bad("workloads", "list at least one Deployment or Job")
	}
	for i := range sp.Workloads {
		s.validateWorkload(fmt.Sprintf("workloads[%d]", i), &sp.Workloads[i], bad)
	}
	for i, c := range sp.Capacity {
		f := fmt.Sprintf("capacity[%d]", i)
		if c.InstanceType == "" || c.Zone == "" {
			bad(f, "set instanceType and zone")
		}
		if !slices.Contains(v1alpha1.CapacityTypes, c.CapacityType) {
			bad(f+".capacityType", "%q: use on-demand, spot or reserved", c.CapacityType)
		}
		if c.Available < 0 {
			bad(f+".available", "must not be negative")
		}
		if c.Until.Duration != 0 && c.Until.Duration <= c.From.Duration {
			bad(f+".until", "%s is not after from (%s)", c.Until.Duration, c.From.Duration)
		}
	}
	for i := range sp.CapacityReservations {
		s.validateReservation(fmt.Sprintf("capacityReservations[%d]", i), &sp.CapacityReservations[i], bad)
	}
	s.validateZoneOutages(bad)
	if sp.Interruptions.SpotRatePerHour < 0 {
		bad("interruptions.spotRatePerHour", "must not be negative")
	}
	for name, r := range sp.Boot {
		if r.Min.Duration <= 0 || r.Max.Duration < r.Min.Duration {
			bad("boot."+name, "needs 0 < min <= max, e.g. {min: 60s, max: 120s}")
		}
	}
	if r := sp.PodStartup; r.Max.Duration < r.Min.Duration || r.Min.Duration < 0 {
		bad("podStartup", "needs 0 <= min <= max")
	}
	if ca := sp.ClusterAutoscaler; ca != nil {
		for i, g := range ca.NodeGroups {
			f := fmt.Sprintf("clusterAutoscaler.nodeGroups[%d]", i)
			if g.Name == "" || g.InstanceType == "" || len(g.Zones) == 0 {
				bad(f, "set name, instanceType and zones")
			}
			if g.Max <= 0 || g.Min < 0 || g.Min > g.Max {
				bad(f, "needs 0 <= min <= max and max > 0")
			}
			if g.CapacityType != "" && g.CapacityType != v1alpha1.CapacityTypeOnDemand && g.CapacityType != v1alpha1.CapacityTypeSpot {
				bad(f+".capacityType", "%q: an Auto Scaling group runs on-demand or spot", g.CapacityType)
			}
		}
	}
	return errors.Join(append(errs, s.validateObjects()...)...)
}

// validateObjects checks the pools, classes and workloads' pod templates,
// each error on its line.
func (s *Scenario) validateObjects() []error {
	var errs []error
	check := func(obj any, list field.ErrorList) {
		if m := s.where[obj]; m != nil && len(list) > 0 {
			errs = append(errs, m.FieldErrors(list)...)
		}
	}
	for _, np := range s.NodePools {
		np.SetDefaults()
		check(np, np.Validate())
	}
	for _, nc := range s.NodeClasses {
		nc.SetDefaults()
		check(nc, nc.Validate())
	}
	template := field.NewPath("spec", "template", "spec")
	for _, d := range s.Deployments {
		check(d, manifest.ValidatePodSpec(template, &d.Spec.Template.Spec))
	}
	for _, j := range s.Jobs {
		check(j, manifest.ValidatePodSpec(template, &j.Spec.Template.Spec))
	}
	for _, ds := range s.DaemonSets {
		check(ds, manifest.ValidatePodSpec(template, &ds.Spec.Template.Spec))
	}
	for _, pdb := range s.PodDisruptionBudgets {
		check(pdb, validatePDB(pdb))
	}
	s.validatePriorities(check)
	return errs
}

func (s *Scenario) validateWorkload(f string, w *Workload, bad func(string, string, ...any)) {
	switch {
	case (w.Deployment == "") == (w.Job == ""):
		bad(f, "set exactly one of deployment and job")
	case w.Deployment != "":
		if s.deployment(w.Deployment) == nil {
			bad(f+".deployment", "no Deployment %q in the file: add it or fix the name", w.Deployment)
		}
		if len(w.Replicas) == 0 {
			bad(f+".replicas", "give at least one point, e.g. [{at: 0s, count: 10}]")
		}
		for j, p := range w.Replicas {
			if p.Count < 0 {
				bad(fmt.Sprintf("%s.replicas[%d].count", f, j), "must not be negative")
			}
			if j > 0 && p.At.Duration < w.Replicas[j-1].At.Duration {
				bad(fmt.Sprintf("%s.replicas[%d].at", f, j), "points must be in time order")
			}
		}
	default:
		if s.job(w.Job) == nil {
			bad(f+".job", "no Job %q in the file: add it or fix the name", w.Job)
		}
		if w.RunFor.Duration <= 0 {
			bad(f+".runFor", "must be positive: how long each pod of the Job runs")
		}
	}
}

func (s *Scenario) deployment(key string) *appsv1.Deployment {
	for _, d := range s.Deployments {
		if matchesKey(d.ObjectMeta, key) {
			return d
		}
	}
	return nil
}

func (s *Scenario) job(key string) *batchv1.Job {
	for _, j := range s.Jobs {
		if matchesKey(j.ObjectMeta, key) {
			return j
		}
	}
	return nil
}

func matchesKey(m metav1.ObjectMeta, key string) bool {
	ns, name, ok := strings.Cut(key, "/")
	if !ok {
		ns, name = "default", key
	}
	objNS := m.Namespace
	if objNS == "" {
		objNS = "default"
	}
	return objNS == ns && m.Name == name
}

// ReplicasAt is the count a curve gives at t: the last point's count once its
// ramp is over, linear within a ramp, and 0 before the first point.
func (w *Workload) ReplicasAt(t time.Duration) int32 {
	var prev int32
	for _, p := range w.Replicas {
		if t < p.At.Duration {
			break
		}
		end := p.At.Duration + p.Over.Duration
		if p.Over.Duration <= 0 || t >= end {
			prev = p.Count
			continue
		}
		frac := float64(t-p.At.Duration) / float64(p.Over.Duration)
		prev += int32(float64(p.Count-prev) * frac)
		return prev
	}
	return prev
}
