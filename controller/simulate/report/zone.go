package report

import "time"

// ZoneOutage is what one zone's outage cost the cluster: the nodes it took
// away, the pods its NoExecute taints evicted (or that were lost with an
// instance there), and when every pod ran again.
type ZoneOutage struct {
	Zone string
	From time.Time
	// Until is when the zone came back; zero when it did not within the run.
	Until time.Time
	// InstancesReturn says whether the zone's instances came back Ready.
	InstancesReturn bool
	// Nodes is how many nodes (or instances still booting) the zone had when it went.
	Nodes int
	// PodsLost counts the pods evicted from the zone's unreachable nodes,
	// or lost with an instance terminated there.
	PodsLost int
	// AllRunning is the first instant after the first pod was lost at which
	// every pod the workloads want was Running again; zero if never.
	AllRunning time.Time
}

// ToAllRunning is the time from the outage's start until every pod ran
// again, and false when no pod was lost or they never all ran again.
func (z ZoneOutage) ToAllRunning() (time.Duration, bool) {
	if z.AllRunning.IsZero() {
		return 0, false
	}
	return z.AllRunning.Sub(z.From), true
}
