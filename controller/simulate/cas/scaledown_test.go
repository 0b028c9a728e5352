package cas_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/scheduling"
	"github.com/stowage-dev/stowage/controller/simulate/cas"
)

// big is a Ready 16-CPU node at 10/16 CPU, with room for 6 more.
func big(pods ...*corev1.Pod) cas.Node {
	return readyNode("big", large, append(pods, pod("resident", "10", "1Gi"))...)
}

// scaleDownCase is a light node beside big, watched for 20 minutes.
type scaleDownCase struct {
	name    string
	light   []*corev1.Pod
	min     int
	big     cas.Node
	arrive  time.Duration // a pending pod arrives for gpu at this time; 0 for none
	wantAt  time.Duration // when light is removed; never for not at all
	wantWhy string
}

const never = time.Duration(-1)

func TestScaleDownOfAnUnneededNode(t *testing.T) {
	const why = "utilization 0.25 under 0.50, unneeded for 10m0s"
	web := pods("web", 1, "1", "1Gi")
	cases := []scaleDownCase{
		{"removed after 10m unneeded, not before", web, 0, big(), 0, 10 * time.Minute, why},
		{"utilization just under 0.5 is unneeded", pods("web", 1, "1960m", "1Gi"), 0, big(), 0, 10 * time.Minute, "utilization 0.49 under 0.50, unneeded for 10m0s"},
		{"utilization of exactly 0.5 is not", pods("web", 1, "2", "1Gi"), 0, big(), 0, never, ""},
		{"memory counts when it is the larger share", pods("web", 1, "100m", "8Gi"), 0, big(), 0, never, ""},
		{"pods that fit nowhere keep the node", web, 0, readyNode("big", large, pod("resident", "16", "1Gi")), 0, never, ""},
		{"a scale-up holds deletions for 10m", web, 0, big(), 5 * time.Minute, 15 * time.Minute, "utilization 0.25 under 0.50, unneeded for 15m0s"},
		{"min size holds", web, 1, big(), 0, never, ""},
		{"safe-to-evict=false blocks", pods("web", 1, "1", "1Gi", annotate(cas.AnnotationSafeToEvict, "false")), 0, big(), 0, never, ""},
		{"a pod with no controller blocks", pods("web", 1, "1", "1Gi", orphan), 0, big(), 0, never, ""},
		{"local storage blocks", pods("web", 1, "1", "1Gi", emptyDir), 0, big(), 0, never, ""},
		{"safe-to-evict=true overrides local storage", pods("web", 1, "1", "1Gi", emptyDir, annotate(cas.AnnotationSafeToEvict, "true")), 0, big(), 0, 10 * time.Minute, why},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkScaleDown(t, tc) })
	}
}

func checkScaleDown(t *testing.T, tc scaleDownCase) {
	w := newWorld()
	web := general
	web.MinSize = tc.min
	w.nodes = []cas.Node{tc.big, readyNode("light", web, tc.light...)}
	a := newAutoscaler(t, w, web, large, gpu)
	acts := run(t, a, w, tc.arrive)
	if tc.arrive > 0 {
		w.pending = pods("vllm", 1, "4", "16Gi", gpus(4))
	}
	downs := ofKind(append(acts, run(t, a, w, 20*time.Minute-tc.arrive)...), cas.ActionScaleDown)
	if tc.wantAt == never {
		if len(downs) != 0 {
			t.Fatalf("scale-downs %+v, want none", downs)
		}
		return
	}
	if len(downs) != 1 || downs[0].Node != "light" || downs[0].At.Sub(t0) != tc.wantAt || downs[0].Reason != tc.wantWhy {
		t.Fatalf("scale-downs %+v; want light removed at %s (%s)", downs, tc.wantAt, tc.wantWhy)
	}
}

func annotate(key, value string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Annotations = map[string]string{key: value} }
}

func orphan(p *corev1.Pod) { p.OwnerReferences = nil }

func emptyDir(p *corev1.Pod) {
	p.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
}

func TestEmptyNodesGoInBulkOfTen(t *testing.T) {
	w := newWorld()
	for i := range 12 {
		w.nodes = append(w.nodes, readyNode(fmt.Sprintf("empty-%02d", i), general, pod("agent", "100m", "128Mi", daemonSetPod)))
	}
	a := newAutoscaler(t, w, general)
	acts := run(t, a, w, 10*time.Minute+20*time.Second)
	byTime := map[time.Duration]int{}
	for _, d := range ofKind(acts, cas.ActionScaleDown) {
		byTime[d.At.Sub(t0)]++
	}
	want := map[time.Duration]int{10 * time.Minute: 10, 10*time.Minute + 10*time.Second: 2}
	if len(byTime) != len(want) || byTime[10*time.Minute] != 10 || byTime[10*time.Minute+10*time.Second] != 2 {
		t.Fatalf("deletions by time %v, want %v", byTime, want)
	}
}

func TestNonEmptyNodesGoOneAtATime(t *testing.T) {
	w := newWorld()
	w.nodes = []cas.Node{big()}
	for i := range 3 {
		w.nodes = append(w.nodes, readyNode(fmt.Sprintf("light-%d", i), general, pod(fmt.Sprintf("web-%d", i), "1", "1Gi")))
	}
	a := newAutoscaler(t, w, general, large)
	run(t, a, w, 10*time.Minute+30*time.Second)
	want := []removal{{10 * time.Minute, "light-0"}, {10*time.Minute + 10*time.Second, "light-1"}, {10*time.Minute + 20*time.Second, "light-2"}}
	if !slices.Equal(w.removed, want) {
		t.Fatalf("removals %+v, want %+v", w.removed, want)
	}
}

func TestFailedDeletionHoldsScaleDownThreeMinutes(t *testing.T) {
	w := newWorld()
	w.nodes = []cas.Node{readyNode("empty-a", general), readyNode("empty-b", general)}
	w.removeErr = errors.New("instance protected")
	a := newAutoscaler(t, w, general)
	acts := run(t, a, w, 10*time.Minute+10*time.Second)
	w.removeErr = nil
	acts = append(acts, run(t, a, w, 3*time.Minute+10*time.Second)...)
	failed, downs := ofKind(acts, cas.ActionScaleDownFailed), ofKind(acts, cas.ActionScaleDown)
	if len(failed) != 2 || len(downs) != 2 || downs[0].At.Sub(t0) != 13*time.Minute {
		t.Fatalf("failed %+v, deleted %+v; want 2 failures at 10m and both deleted at 13m", failed, downs)
	}
}

func TestUtilization(t *testing.T) {
	gpuNode := cas.Node{Allocatable: withGPUs(resources("48", "192Gi"), 4), Requested: withGPUs(resources("4", "16Gi"), 4)}
	cases := []struct {
		name string
		node cas.Node
		want float64
	}{
		{"cpu share", cas.Node{Allocatable: resources("4", "16Gi"), Requested: resources("1", "2Gi")}, 0.25},
		{"memory share when larger", cas.Node{Allocatable: resources("4", "16Gi"), Requested: resources("1", "12Gi")}, 0.75},
		{"GPU alone on GPU nodes", gpuNode, 1},
		{"empty", cas.Node{Allocatable: resources("4", "16Gi")}, 0},
		{"no allocatable", cas.Node{Requested: scheduling.Resources{CPU: 1}}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := cas.Utilization(&tc.node); got != tc.want {
				t.Fatalf("Utilization = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	noZones := general
	noZones.Zones = nil
	cases := []struct {
		name   string
		groups []cas.NodeGroup
		opt    cas.Option
	}{
		{"duplicate group", []cas.NodeGroup{general, general}, nil},
		{"group without zones", []cas.NodeGroup{noZones}, nil},
		{"threshold above 1", []cas.NodeGroup{general}, func(c *cas.Config) { c.ScaleDownUtilizationThreshold = 1.5 }},
		{"zero scan interval", []cas.NodeGroup{general}, func(c *cas.Config) { c.ScanInterval = 0 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var opts []cas.Option
			if tc.opt != nil {
				opts = append(opts, tc.opt)
			}
			if _, err := cas.New(newWorld().clk, tc.groups, opts...); err == nil {
				t.Fatal("New accepted bad input")
			}
		})
	}
}
