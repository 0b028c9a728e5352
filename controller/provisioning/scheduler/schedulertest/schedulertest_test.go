package schedulertest_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler/schedulertest"
)

// describe renders a pod as WORKLOADS.md's check values do: cpu/memory, labels, selector.
func describe(p *corev1.Pod) string {
	c := p.Spec.Containers[0].Resources.Requests
	s := fmt.Sprintf("%dm/%dMi", c.Cpu().MilliValue(), c.Memory().Value()>>20)
	if v, ok := p.Labels[schedulertest.LabelKey]; ok {
		s += " " + v
	}
	if tsc := p.Spec.TopologySpreadConstraints; len(tsc) > 0 {
		s += "->" + tsc[0].LabelSelector.MatchLabels[schedulertest.LabelKey]
	}
	return s
}

func TestW1CheckValues(t *testing.T) {
	pods := schedulertest.W1(1000)
	want := map[int]string{
		0: "500m/512Mi f", 1: "1000m/256Mi b", 2: "250m/512Mi g", 3: "1500m/4096Mi d", 4: "1000m/512Mi c", 5: "500m/4096Mi g",
		200: "1500m/4096Mi d->e", 400: "500m/512Mi a->f", 600: "1000m/1024Mi", 800: "250m/4096Mi",
	}
	for i, w := range want {
		if got := describe(pods[i]); got != w {
			t.Errorf("pod [%d] = %s, want %s", i, got, w)
		}
	}
	if v := pods[600].Labels[schedulertest.AffinityLabelKey]; v != "f" {
		t.Errorf("pod [600] affinity label = %q, want f", v)
	}
}

func TestW1Totals(t *testing.T) {
	for _, tc := range []struct {
		n           int
		milli, mibs int64
	}{{1000, 663_350, 1_341_084}, {5000, 3_309_000, 6_708_012}} {
		pods := schedulertest.W1(tc.n)
		var milli, mem int64
		for _, p := range pods {
			milli += p.Spec.Containers[0].Resources.Requests.Cpu().MilliValue()
			mem += p.Spec.Containers[0].Resources.Requests.Memory().Value() >> 20
		}
		if len(pods) != tc.n || milli != tc.milli || mem != tc.mibs {
			t.Errorf("W1(%d): %d pods, %d m, %d Mi; want %d, %d m, %d Mi", tc.n, len(pods), milli, mem, tc.n, tc.milli, tc.mibs)
		}
	}
}

func TestW3(t *testing.T) {
	pods := schedulertest.W3()
	if len(pods) != 4000 || describe(pods[0]) != "100m/4096Mi" || describe(pods[3999]) != "100m/4096Mi" {
		t.Errorf("W3: %d pods, first %s; want 4000 of 100m/4096Mi", len(pods), describe(pods[0]))
	}
}

func TestCatalogues(t *testing.T) {
	c1, c2 := schedulertest.C1(), schedulertest.C2()
	if len(c1) != 400 || len(c2) != 36 {
		t.Fatalf("catalogue sizes %d, %d; want 400, 36", len(c1), len(c2))
	}
	last := c1[399]
	if last.Name != "fake-it-399" || last.Capacity.CPU != 400_000 || last.Capacity.Memory != 800<<30 || last.Capacity.Pods != 4000 || len(last.Offerings) != 5 {
		t.Errorf("fake-it-399 = %+v", last)
	}
	if a := last.Allocatable(); a.CPU != 399_900 || a.Memory != 800<<30-10<<20 {
		t.Errorf("fake-it-399 allocatable = %+v", a)
	}
	r := find(c2, "r-256x-amd64-linux")
	if r == nil || r.Capacity.Pods != 1024 || r.Capacity.Memory != 2048<<30 || len(r.Offerings) != 8 {
		t.Fatalf("r-256x-amd64-linux = %+v", r)
	}
	wantOD := 0.025*256 + 0.001*float64(int64(2048)<<30)/1e9
	for _, o := range r.Offerings {
		want := wantOD
		if o.CapacityType == "spot" {
			want = 0.7 * wantOD
		}
		if diff := o.Price - want; diff > 1e-9 || diff < -1e-9 {
			t.Errorf("%s %s price %f, want %f", o.Zone, o.CapacityType, o.Price, want)
		}
	}
}

func find(types []*cloudprovider.InstanceType, name string) *cloudprovider.InstanceType {
	for _, it := range types {
		if it.Name == name {
			return it
		}
	}
	return nil
}

func TestLowerBound(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     int
		types []*cloudprovider.InstanceType
		want  string
	}{
		{"C1/1000", 1000, schedulertest.C1(), "208.788"},
		{"C1/5000", 5000, schedulertest.C1(), "1041.502"},
		{"C2/1000", 1000, schedulertest.C2(), "12.606"},
		{"C2/5000", 5000, schedulertest.C2(), "62.882"},
	} {
		if got := fmt.Sprintf("%.3f", schedulertest.LowerBound(schedulertest.W1(tc.n), tc.types)); got != tc.want {
			t.Errorf("%s: lower bound %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestSnapshot(t *testing.T) {
	s := schedulertest.Snapshot(schedulertest.W1(10), schedulertest.C1())
	if len(s.Pods) != 10 || len(s.NodePools) != 1 || len(s.InstanceTypes[schedulertest.DefaultPoolName]) != 400 || len(s.Nodes) != 0 {
		t.Errorf("snapshot = %+v", s)
	}
}
