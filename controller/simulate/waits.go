package simulate

import (
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning"
	"github.com/stowage-dev/stowage/controller/simulate/report"
	"github.com/stowage-dev/stowage/controller/termination"
)

// waitWatch finds why pods wait, for the report's Waits. It keeps, per pod,
// what held it back longest: the provisioner's word on it (a nomination, or
// a refusal looked into when it is made: a NodeClass not Ready, pools at
// their limits, a drain held) and the launch failures of the claims it was
// nominated to. Only Stowage's run has one.
type waitWatch struct {
	launch *launchability
	// at is the instant launch's pool rooms were counted at.
	at time.Time
	// pod key -> what holds it back now
	holds map[string]hold
	// pod key -> what held it back longest before that
	longest map[string]pastHold
	// claim name -> the pods nominated to it
	nominated map[string][]string
	// pool name -> node name -> what holds its drain back
	held map[string]map[string]heldDrain
	// workload -> the pools its pods can use, with the offerings they fit
	pools map[*workloadState][]poolFit
	waits report.Waits
}

type hold struct {
	kind, reason string
	since        time.Time // when it began holding the pod back
}

// pastHold is a hold that ended, and how long it lasted.
type pastHold struct {
	hold
	lasted time.Duration
}

// set records what holds the pod back from now: a repeat of its current hold
// keeps its start; another files the current one away when it held the pod
// longer than any before, so that the report names what held the pod
// longest, not what came last (pods a zone spread held for an hour while
// their zone was lost, then a launch for a few seconds, waited for the
// spread).
func (ww *waitWatch) set(key string, h hold, now time.Time) {
	cur, ok := ww.holds[key]
	if ok && cur.kind == h.kind && cur.reason == h.reason {
		return
	}
	if d := now.Sub(cur.since); ok && d > ww.longest[key].lasted {
		ww.longest[key] = pastHold{cur, d}
	}
	h.since = now
	ww.holds[key] = h
}

// heldDrain is a node whose drain (or disruption) is held back, and until
// when that is known to hold.
type heldDrain struct {
	until time.Time
	why   string
}

// refusalFresh is how long an eviction refusal is taken to hold a drain: the
// drain retries at least this often while it is refused
// (termination.DefaultEvictionRetryMax, and a poll).
const refusalFresh = termination.DefaultEvictionRetryMax + 10*time.Second

func newWaitWatch(s *Scenario) *waitWatch {
	return &waitWatch{launch: newLaunchability(s), holds: map[string]hold{}, longest: map[string]pastHold{}, nominated: map[string][]string{},
		held: map[string]map[string]heldDrain{}, pools: map[*workloadState][]poolFit{}}
}

// published hears the provisioner's word on pods.
func (ww *waitWatch) published(w *world, evs []provisioning.Event) {
	now := w.clk.Now()
	for _, ev := range evs {
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok {
			continue
		}
		key := pod.Namespace + "/" + pod.Name
		switch ev.Reason {
		case provisioning.ReasonWaitingForBatch:
			ww.set(key, hold{kind: report.WaitSolveBound, reason: solveBoundWait}, now)
		case provisioning.ReasonNominated:
			if ww.holds[key].kind == report.WaitSolveBound {
				// The bound is what held it back, unless its launch fails.
				if claim, isClaim := ev.Related.(*v1alpha1.NodeClaim); isClaim {
					ww.nominated[claim.Name] = append(ww.nominated[claim.Name], key)
				}
				continue
			}
			if claim, isClaim := ev.Related.(*v1alpha1.NodeClaim); isClaim {
				ww.set(key, hold{kind: report.WaitLaunching, reason: "nominated to nodeclaim " + claim.Name + ", not Ready yet"}, now)
				ww.nominated[claim.Name] = append(ww.nominated[claim.Name], key)
			} else {
				ww.set(key, hold{kind: report.WaitLaunching, reason: "nominated to node " + ev.Related.GetName()}, now)
			}
		case provisioning.ReasonFailedScheduling:
			if sp, tracked := w.pods[key]; tracked {
				ww.set(key, ww.refused(w, sp, ev.Message), now)
			}
		}
	}
}

// solveBoundWait is the report's reason for pods a solve's bound left for a
// later batch.
const solveBoundWait = "a batch's solve reached its time bound before the pod's turn (higher priorities go first); a later batch placed it"

// launchFailed puts the pods nominated to the claim down to its failure.
func (ww *waitWatch) launchFailed(w *world, claim *v1alpha1.NodeClaim, err error) {
	h := hold{kind: report.WaitLaunchFailed, reason: err.Error()}
	switch {
	case cloudprovider.IsInsufficientCapacityError(err):
		h.kind = report.WaitShortage
	case cloudprovider.IsNodeClassNotReadyError(err):
		h.kind = report.WaitNodeClassNotReady
		if ref := claim.Spec.NodeClassRef; ref != nil {
			if why, ready := ww.classReady(w, ref.Name); !ready {
				h.reason = why
			}
		}
	}
	for _, key := range ww.nominated[claim.Name] {
		ww.set(key, h, w.clk.Now())
	}
	delete(ww.nominated, claim.Name)
}

// drainHeld notes a node of the pool whose drain a budget or PDB holds,
// until the given time or until released.
func (ww *waitWatch) drainHeld(pool, node string, until time.Time, why string) {
	if pool == "" {
		return
	}
	if ww.held[pool] == nil {
		ww.held[pool] = map[string]heldDrain{}
	}
	ww.held[pool][node] = heldDrain{until: until, why: why}
}

// released forgets what held a node: it was disrupted, or is gone.
func (ww *waitWatch) released(node string) {
	for _, nodes := range ww.held {
		delete(nodes, node)
	}
}

// heldIn is what holds back a drain in the pool now, if anything does.
func (ww *waitWatch) heldIn(pool string, now time.Time) (string, bool) {
	for _, node := range slices.Sorted(maps.Keys(ww.held[pool])) {
		if h := ww.held[pool][node]; !now.After(h.until) {
			return h.why, true
		}
	}
	return "", false
}

// refused looks into a refusal: the pools the pod could use all have a
// NodeClass that is not Ready, or all their offerings are short, or they are
// all at their limits (a drain held meanwhile or not); else it is the
// provisioner's own reason.
func (ww *waitWatch) refused(w *world, sp *simPod, message string) hold {
	pools := ww.poolsOf(sp.workload)
	if len(pools) == 0 {
		return hold{kind: report.WaitProvisioner, reason: message}
	}
	if why, ok := ww.noReadyClass(w, pools); ok {
		return hold{kind: report.WaitNodeClassNotReady, reason: why}
	}
	if allShort(w, pools) {
		return hold{kind: report.WaitShortage, reason: "every offering its pools allow is short: " + message}
	}
	if !ww.atLimits(w, pools) {
		return hold{kind: report.WaitProvisioner, reason: message}
	}
	for _, pf := range pools {
		if why, ok := ww.heldIn(pf.pool.Name, w.clk.Now()); ok {
			return hold{kind: report.WaitDrainHeld, reason: fmt.Sprintf("nodepool %s is at its limits, and %s", pf.pool.Name, why)}
		}
	}
	return hold{kind: report.WaitPoolLimit, reason: fmt.Sprintf("nodepool %s is at its limits: %s", pools[0].pool.Name, message)}
}

// noReadyClass says why, when no pool has a Ready NodeClass.
func (ww *waitWatch) noReadyClass(w *world, pools []poolFit) (string, bool) {
	why := ""
	for _, pf := range pools {
		ref := pf.pool.Spec.Template.Spec.NodeClassRef
		if ref == nil {
			continue
		}
		reason, ready := ww.classReady(w, ref.Name)
		if ready {
			return "", false
		}
		if why == "" {
			why = reason
		}
	}
	return why, why != ""
}

// classReady reads the NodeClass's Ready condition as its status controller
// wrote it; a class not resolved yet counts as Ready.
func (ww *waitWatch) classReady(w *world, name string) (string, bool) {
	nc, ok := peek[*v1alpha1.NodeClass](w.kube.mirror, client.ObjectKey{Name: name})
	if !ok {
		return fmt.Sprintf("NodeClass %s does not exist", name), false
	}
	cond := meta.FindStatusCondition(nc.Status.Conditions, v1alpha1.ConditionReady)
	if cond == nil || cond.Status != "False" {
		return "", true
	}
	return fmt.Sprintf("NodeClass %s is not Ready: %s: %s", name, cond.Reason, cond.Message), false
}

// allShort reports whether every offering of the pools the pod fits is short.
func allShort(w *world, pools []poolFit) bool {
	for _, pf := range pools {
		for _, o := range pf.offers {
			if !w.short(offer(o.key.InstanceType, o.key.Zone, o.key.CapacityType)) {
				return false
			}
		}
	}
	return true
}

// atLimits reports whether no offering of the pools fits what their limits
// leave now.
func (ww *waitWatch) atLimits(w *world, pools []poolFit) bool {
	if now := w.clk.Now(); !now.Equal(ww.at) {
		ww.at, ww.launch.rooms = now, map[string]*poolRoom{}
	}
	for _, pf := range pools {
		if len(pf.pool.Spec.Limits) == 0 {
			return false
		}
		room := ww.launch.roomOf(w, pf.pool)
		for _, o := range pf.offers {
			if room.fits(o.capacity) {
				return false
			}
		}
	}
	return true
}

// poolsOf lists, once per workload, the pools with offerings its pods fit.
func (ww *waitWatch) poolsOf(ws *workloadState) []poolFit {
	if pools, ok := ww.pools[ws]; ok {
		return pools
	}
	var pools []poolFit
	pod := &corev1.Pod{ObjectMeta: *ws.template.ObjectMeta.DeepCopy(), Spec: *ws.template.Spec.DeepCopy()}
	for _, np := range ww.launch.s.NodePools {
		if pf := ww.launch.poolFitFor(pod, np); len(pf.offers) > 0 {
			pools = append(pools, pf)
		}
	}
	ww.pools[ws] = pools
	return pools
}

// waited counts a pod's wait once it ran (at its start), was deleted pending,
// or was pending at the end: a pod that ran within report.LongWait, or never
// ran but waited no longer than the batch window, waited for nothing worth
// saying.
func (w *world) waited(sp *simPod, ran bool, at time.Time) {
	ww := w.waits
	if ww == nil || sp.workload == nil {
		return
	}
	h, ok := ww.holds[sp.key]
	if past, had := ww.longest[sp.key]; had && (!ok || past.lasted > at.Sub(h.since)) {
		h, ok = past.hold, true
	}
	delete(ww.holds, sp.key)
	delete(ww.longest, sp.key)
	d := at.Sub(sp.created)
	if ran && d <= report.LongWait || !ran && d <= provisioning.DefaultBatchMaxDuration {
		return
	}
	if !ok {
		h = hold{kind: report.WaitUnexplained, reason: "no reason was recorded"}
	}
	ww.waits.Add(h.kind, h.reason, sp.key, d, ran)
}
