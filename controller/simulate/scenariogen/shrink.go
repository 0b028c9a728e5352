package scenariogen

import (
	"bytes"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/simulate"
)

// maxReplays bounds the runs one shrink makes.
const maxReplays = 300

// cut removes or simplifies one part of a scenario in place; it reports
// false when the part does not exist.
type cut func(*simulate.Scenario) bool

// Shrink cuts s down while fails still holds: it removes workloads,
// DaemonSets, pools, NodeClasses, shortage windows, interruptions and
// replica points, drops pod constraints and pool settings, and halves
// replica counts and the duration, one at a time, keeping each cut the
// failure survives, until no cut is kept or maxReplays runs are made. It
// returns the smallest scenario found (s itself is left as it was) and how
// many runs it made.
func Shrink(s *simulate.Scenario, fails func(*simulate.Scenario) bool) (*simulate.Scenario, int) {
	cur, replays := clone(s), 0
	for i := 0; replays < maxReplays; {
		cs := cuts(cur)
		if i >= len(cs) {
			break
		}
		next := clone(cur)
		if !cs[i](next) || !valid(next) {
			i++
			continue
		}
		replays++
		if fails(next) {
			cur = next // the same index now names the next part
			continue
		}
		i++
	}
	return cur, replays
}

// valid reports whether the scenario still reads: no workload names a
// missing object, no pool a missing class.
func valid(s *simulate.Scenario) bool {
	b, err := Marshal(s)
	if err != nil {
		return false
	}
	_, err = simulate.ReadScenario(bytes.NewReader(b))
	return err == nil
}

// cuts lists every cut of the scenario's current shape, the biggest first.
func cuts(s *simulate.Scenario) []cut {
	var out []cut
	for i := range s.Spec.Workloads {
		out = append(out, func(c *simulate.Scenario) bool { return removeWorkload(c, i) })
	}
	for i := range s.DaemonSets {
		out = append(out, func(c *simulate.Scenario) bool { c.DaemonSets = slices.Delete(c.DaemonSets, i, i+1); return true })
	}
	for i := range s.NodePools {
		out = append(out, func(c *simulate.Scenario) bool { c.NodePools = slices.Delete(c.NodePools, i, i+1); return true })
	}
	for i := range s.NodeClasses {
		out = append(out, func(c *simulate.Scenario) bool { c.NodeClasses = slices.Delete(c.NodeClasses, i, i+1); return true })
	}
	for i := range s.Spec.Capacity {
		out = append(out, func(c *simulate.Scenario) bool { c.Spec.Capacity = slices.Delete(c.Spec.Capacity, i, i+1); return true })
	}
	for i := range s.Spec.Interruptions.Scripted {
		out = append(out, func(c *simulate.Scenario) bool {
			c.Spec.Interruptions.Scripted = slices.Delete(c.Spec.Interruptions.Scripted, i, i+1)
			return true
		})
	}
	out = append(out, func(c *simulate.Scenario) bool {
		had := c.Spec.Interruptions.SpotRatePerHour > 0
		c.Spec.Interruptions.SpotRatePerHour = 0
		return had
	}, halveDuration)
	for i := range s.Spec.Workloads {
		for j := range s.Spec.Workloads[i].Replicas {
			out = append(out, func(c *simulate.Scenario) bool { return removePoint(c, i, j) })
		}
		out = append(out, func(c *simulate.Scenario) bool { return halveReplicas(c, i) })
	}
	out = append(out, templateCuts(s)...)
	return append(out, poolCuts(s)...)
}

func removeWorkload(c *simulate.Scenario, i int) bool {
	wl := c.Spec.Workloads[i]
	c.Spec.Workloads = slices.Delete(c.Spec.Workloads, i, i+1)
	c.Deployments = slices.DeleteFunc(c.Deployments, func(d *appsDeployment) bool { return keyOf(d.Namespace, d.Name) == qualified(wl.Deployment) })
	c.Jobs = slices.DeleteFunc(c.Jobs, func(j *batchJob) bool { return keyOf(j.Namespace, j.Name) == qualified(wl.Job) })
	return true
}

func removePoint(c *simulate.Scenario, i, j int) bool {
	wl := &c.Spec.Workloads[i]
	if len(wl.Replicas) < 2 || j >= len(wl.Replicas) {
		return false
	}
	wl.Replicas = slices.Delete(wl.Replicas, j, j+1)
	return true
}

// halveReplicas halves a Deployment's counts, or a Job's parallelism and completions.
func halveReplicas(c *simulate.Scenario, i int) bool {
	wl := &c.Spec.Workloads[i]
	changed := false
	for j := range wl.Replicas {
		if n := wl.Replicas[j].Count; n > 1 {
			wl.Replicas[j].Count, changed = n/2, true
		}
	}
	for _, job := range c.Jobs {
		if keyOf(job.Namespace, job.Name) != qualified(wl.Job) {
			continue
		}
		if p := ptr.Deref(job.Spec.Parallelism, 1); p > 1 {
			job.Spec.Parallelism, changed = ptr.To(p/2), true
		}
		if n := ptr.Deref(job.Spec.Completions, 1); n > 1 {
			job.Spec.Completions, changed = ptr.To(n/2), true
		}
	}
	return changed
}

func halveDuration(c *simulate.Scenario) bool {
	if c.Spec.Duration.Duration <= 10*time.Minute {
		return false
	}
	c.Spec.Duration = dur(c.Spec.Duration.Duration / 2)
	return true
}

// templateCuts drop one kind of constraint from one workload's pod template.
func templateCuts(s *simulate.Scenario) []cut {
	var out []cut
	n := len(s.Deployments) + len(s.Jobs)
	drops := []func(*corev1.PodSpec) bool{
		func(p *corev1.PodSpec) bool { had := p.Affinity != nil; p.Affinity = nil; return had },
		func(p *corev1.PodSpec) bool {
			had := len(p.TopologySpreadConstraints) > 0
			p.TopologySpreadConstraints = nil
			return had
		},
		func(p *corev1.PodSpec) bool { had := len(p.NodeSelector) > 0; p.NodeSelector = nil; return had },
		func(p *corev1.PodSpec) bool { had := len(p.Tolerations) > 0; p.Tolerations = nil; return had },
	}
	for i := range n {
		for _, drop := range drops {
			out = append(out, func(c *simulate.Scenario) bool {
				if i < len(c.Deployments) {
					return drop(&c.Deployments[i].Spec.Template.Spec)
				}
				if i-len(c.Deployments) < len(c.Jobs) {
					return drop(&c.Jobs[i-len(c.Deployments)].Spec.Template.Spec)
				}
				return false
			})
		}
	}
	return out
}

// poolCuts drop one setting from one pool: limits, taints, weight, disruption.
func poolCuts(s *simulate.Scenario) []cut {
	var out []cut
	drops := []func(*v1alpha1.NodePool) bool{
		func(np *v1alpha1.NodePool) bool { had := len(np.Spec.Limits) > 0; np.Spec.Limits = nil; return had },
		func(np *v1alpha1.NodePool) bool {
			had := len(np.Spec.Template.Spec.Taints) > 0
			np.Spec.Template.Spec.Taints = nil
			return had
		},
		func(np *v1alpha1.NodePool) bool { had := np.Spec.Weight != nil; np.Spec.Weight = nil; return had },
		func(np *v1alpha1.NodePool) bool {
			had := np.Spec.Disruption.ConsolidationPolicy != "" || np.Spec.Disruption.ConsolidateAfter != nil || len(np.Spec.Disruption.Budgets) > 0
			np.Spec.Disruption = v1alpha1.Disruption{}
			return had
		},
	}
	for i := range s.NodePools {
		for _, drop := range drops {
			out = append(out, func(c *simulate.Scenario) bool { return i < len(c.NodePools) && drop(c.NodePools[i]) })
		}
	}
	return out
}
