package aws_test

import (
	"context"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	clocktesting "k8s.io/utils/clock/testing"

	stowaws "github.com/stowage-dev/stowage/controller/aws"
	"github.com/stowage-dev/stowage/controller/aws/launchtemplate"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

const (
	refreshEvery = 5 * time.Minute
	gcEvery      = 10 * time.Minute
	templateTTL  = 25 * time.Minute
	waitFor      = 10 * time.Second // real time a background pass may take on a loaded machine
)

type pass struct {
	loop string
	err  error
}

// withLoops sets the loop intervals and reports every pass on the returned channel.
func withLoops(passes chan<- pass, done <-chan struct{}) envOption {
	return func(_ *awsemu.Config, o *stowaws.Options) {
		o.RefreshInterval, o.GCInterval, o.LaunchTemplateTTL = refreshEvery, gcEvery, templateTTL
		o.Observe = func(loop string, err error) {
			select {
			case passes <- pass{loop, err}:
			case <-done:
			}
		}
	}
}

// startLoops runs Start until the test ends and waits for the first pass of both loops.
func startLoops(t *testing.T, e *env, passes <-chan pass, done chan struct{}) {
	t.Helper()
	c, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = e.cp.Start(c); close(stopped) }()
	t.Cleanup(func() { cancel(); close(done); <-stopped })
	waitPasses(t, passes, stowaws.LoopRefresh, stowaws.LoopLaunchTemplateGC)
}

// waitPasses waits until each named loop has completed a pass without error.
func waitPasses(t *testing.T, passes <-chan pass, loops ...string) {
	t.Helper()
	want := map[string]int{}
	for _, l := range loops {
		want[l]++
	}
	deadline := time.After(waitFor)
	for len(want) > 0 {
		select {
		case p := <-passes:
			if p.err != nil {
				t.Fatalf("%s pass failed: %v", p.loop, p.err)
			}
			if want[p.loop]--; want[p.loop] <= 0 {
				delete(want, p.loop)
			}
		case <-deadline:
			t.Fatalf("no pass of %v within %v", want, waitFor)
		}
	}
}

// loopCount is how many loops Start runs, each waiting on the clock between passes.
const loopCount = 2

// stepIdle steps the provider's clock by d once every loop waits on it, and
// fails unless no pass came due: every loop still waits (a timer the step
// fires leaves the clock's waiters within Step, however slow the pass it
// starts would be) and none has reported a pass.
func stepIdle(t *testing.T, e *env, passes <-chan pass, d time.Duration) {
	t.Helper()
	eventually(t, "every loop to wait on the clock", func() bool { return e.clk.Waiters() == loopCount })
	e.clk.Step(d)
	if n := e.clk.Waiters(); n != loopCount {
		t.Fatalf("%d of %d loops still wait on the clock after a %v step: a pass came due early", n, loopCount, d)
	}
	select {
	case p := <-passes:
		t.Fatalf("a %s pass ran after a %v step, before it was due", p.loop, d)
	default:
	}
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.After(waitFor)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func spotPrice(t *testing.T, e *env, instanceType, zone string) float64 {
	t.Helper()
	types, err := e.cp.InstanceTypes(ctx(t), nodePool("default"))
	if err != nil {
		t.Fatalf("listing instance types: %v", err)
	}
	for _, it := range types {
		for _, o := range it.Offerings {
			if it.Name == instanceType && o.Zone == zone && o.CapacityType == "spot" {
				return o.Price
			}
		}
	}
	t.Fatalf("no spot offering of %s in %s", instanceType, zone)
	return 0
}

// TestCatalogueRefreshesOnTheClock: a spot price change in EC2 shows in
// InstanceTypes after the refresh interval on the clock and not before, and a
// refresh stuck on a slow DescribeInstanceTypes blocks neither InstanceTypes
// nor a launch.
func TestCatalogueRefreshesOnTheClock(t *testing.T) {
	passes, done := make(chan pass), make(chan struct{})
	emuClk := clocktesting.NewFakeClock(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	e := newEnv(t, awsemu.SmallCatalogue(), 3, withLoops(passes, done), func(c *awsemu.Config, _ *stowaws.Options) { c.Clock = emuClk })
	t.Cleanup(func() { emuClk.Step(time.Hour) }) // release a request still held, so that the server can close
	startLoops(t, e, passes, done)

	key := awsemu.PoolKey{InstanceType: "m6i.large", Zone: "us-east-1a", CapacityType: "spot"}
	before := spotPrice(t, e, key.InstanceType, key.Zone)
	e.emu.SetPrice(key, 2*before)
	stepIdle(t, e, passes, refreshEvery-time.Second)
	if got := spotPrice(t, e, key.InstanceType, key.Zone); got != before {
		t.Fatalf("price %v a second before the refresh is due, want the cached %v", got, before)
	}
	e.clk.Step(time.Second)
	waitPasses(t, passes, stowaws.LoopRefresh)
	if got := spotPrice(t, e, key.InstanceType, key.Zone); got != 2*before {
		t.Fatalf("price %v after the refresh, want %v", got, 2*before)
	}

	// The next refresh hangs in DescribeInstanceTypes until the emulator's clock moves.
	e.emu.Inject(awsemu.Fault{Action: "DescribeInstanceTypes", Kind: awsemu.FaultLatency, Delay: time.Hour, Times: 1})
	e.emu.SetPrice(key, 3*before)
	e.clk.Step(refreshEvery)
	eventually(t, "the refresh to wait in DescribeInstanceTypes", emuClk.HasWaiters)
	if _, err := e.cp.Create(ctx(t), nodeClaim("during-refresh", []string{"m6i.large"}, []string{"on-demand"})); err != nil {
		t.Fatalf("Create during a refresh: %v", err)
	}
	emuClk.Step(time.Hour)
	waitPasses(t, passes, stowaws.LoopRefresh)
	if got := spotPrice(t, e, key.InstanceType, key.Zone); got != 3*before {
		t.Fatalf("price %v after the slow refresh, want %v", got, 3*before)
	}
}

// TestUnusedLaunchTemplatesAreDeleted runs the launch template GC on the clock:
// a template goes once unused for the TTL, one an earlier process left is
// given the TTL from when it is first seen, other clusters' templates stay,
// and a launch whose template was deleted under it recreates it.
func TestUnusedLaunchTemplatesAreDeleted(t *testing.T) {
	passes, done := make(chan pass), make(chan struct{})
	e := newEnv(t, awsemu.SmallCatalogue(), 3, withLoops(passes, done), func(_ *awsemu.Config, o *stowaws.Options) {
		o.RefreshInterval = 24 * time.Hour // keep refresh passes out of the way
	})
	startLoops(t, e, passes, done)
	if _, err := e.cp.Create(ctx(t), nodeClaim("a", []string{"m6i.large"}, []string{"on-demand"})); err != nil {
		t.Fatalf("Create: %v", err)
	}
	used := templateNames(e)[0]
	orphan := createTemplate(t, e, "stowage/"+cluster+"/from-an-earlier-process", cluster)
	foreign := createTemplate(t, e, "stowage/other/abc", "other")
	steps := []struct {
		at   time.Duration
		want []string
	}{
		{gcEvery, []string{used, orphan, foreign}},     // the orphan is first seen at 10m
		{2 * gcEvery, []string{used, orphan, foreign}}, // used 20m ago
		{3 * gcEvery, []string{orphan, foreign}},       // used 30m ago: deleted
		{4 * gcEvery, []string{foreign}},               // the orphan was seen 30m ago
		{5 * gcEvery, []string{foreign}},
	}
	for _, s := range steps {
		e.clk.Step(gcEvery)
		waitPasses(t, passes, stowaws.LoopLaunchTemplateGC)
		if got := templateNames(e); !sameSet(got, s.want) {
			t.Fatalf("at %v: templates %v, want %v", s.at, got, s.want)
		}
	}
	if _, err := e.cp.Create(ctx(t), nodeClaim("b", []string{"m6i.large"}, []string{"on-demand"})); err != nil {
		t.Fatalf("Create after the GC: %v", err)
	}
	deleteTemplate(t, e, used) // behind the provider's back, which still remembers it
	e.emu.ResetCalls()
	if _, err := e.cp.Create(ctx(t), nodeClaim("c", []string{"m6i.large"}, []string{"on-demand"})); err != nil {
		t.Fatalf("Create with the template deleted under it: %v", err)
	}
	if n := e.emu.Calls("CreateLaunchTemplate"); n != 1 || !sameSet(templateNames(e), []string{used, foreign}) {
		t.Fatalf("%d templates created, templates %v; want %s recreated once", n, templateNames(e), used)
	}
}

func templateNames(e *env) []string {
	var out []string
	for _, lt := range e.emu.LaunchTemplates() {
		out = append(out, lt.Name)
	}
	return out
}

func createTemplate(t *testing.T, e *env, name, clusterTag string) string {
	t.Helper()
	_, err := e.clients.EC2.CreateLaunchTemplate(ctx(t), &ec2.CreateLaunchTemplateInput{LaunchTemplateName: awssdk.String(name),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: awssdk.String(firstImage(e))},
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate,
			Tags: []ec2types.Tag{{Key: awssdk.String(launchtemplate.TagCluster), Value: awssdk.String(clusterTag)}}}}})
	if err != nil {
		t.Fatalf("creating launch template %s: %v", name, err)
	}
	return name
}

func deleteTemplate(t *testing.T, e *env, name string) {
	t.Helper()
	if _, err := e.clients.EC2.DeleteLaunchTemplate(ctx(t), &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: awssdk.String(name)}); err != nil {
		t.Fatalf("deleting launch template %s: %v", name, err)
	}
}

func sameSet(a, b []string) bool {
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		seen[s]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}
