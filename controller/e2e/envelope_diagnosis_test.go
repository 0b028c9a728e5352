package e2e_test

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

// lateShown bounds how many late pods a failed envelope step describes, and
// logLinesShown the operator log lines shown for each claim or pod.
const (
	lateShown     = 5
	logLinesShown = 8
)

// diagnoseLate describes the first of the pods an envelope step found not
// Running in time, so that the run that breaks the time rule says why: each
// pod's phase, node, PodScheduled condition and nominated node, then every
// event about it in time order with the component that reported it
// (kube-scheduler's FailedScheduling, Stowage's Nominated or its own
// FailedScheduling with the reason it could not place the pod, the kubelet's).
func (b *bed) diagnoseLate(ctx context.Context, late []string) []string {
	var out []string
	var events eventsv1.EventList
	if err := b.Admin.List(ctx, &events, client.InNamespace(envelopeNS)); err != nil {
		return []string{fmt.Sprintf("DIAG listing the events of %s: %v", envelopeNS, err)}
	}
	slices.SortStableFunc(events.Items, func(a, b eventsv1.Event) int { return cmp.Compare(diagEventTime(a), diagEventTime(b)) })
	d := diagSources{logs: strings.Split(logs.String(), "\n"), instances: b.instancesByClaim()}
	for _, name := range late[:min(len(late), lateShown)] {
		var pod corev1.Pod
		if err := b.Admin.Get(ctx, client.ObjectKey{Namespace: envelopeNS, Name: name}, &pod); err != nil {
			out = append(out, fmt.Sprintf("DIAG pod=%s: %v", name, err))
			continue
		}
		out = append(out, fmt.Sprintf("DIAG pod=%s created=%s phase=%s node=%q nominated=%q scheduled=%q", name,
			pod.CreationTimestamp.UTC().Format("15:04:05"), pod.Status.Phase, pod.Spec.NodeName, pod.Status.NominatedNodeName, diagScheduled(&pod)))
		claims := map[string]bool{}
		for _, e := range events.Items {
			if e.Regarding.Kind == "Pod" && e.Regarding.Name == name {
				out = append(out, fmt.Sprintf("DIAG pod=%s event at=%s from=%s reason=%s count=%d note=%q", name,
					diagEventClock(e), e.ReportingController, e.Reason, diagEventCount(e), e.Note))
				if claim, ok := strings.CutPrefix(e.Note, "Pod should schedule on nodeclaim "); ok {
					claims[claim] = true
				}
			}
		}
		out = append(out, d.logLines("pod="+name, name)...)
		for _, claim := range slices.Sorted(maps.Keys(claims)) {
			out = append(out, b.diagnoseClaim(ctx, d, claim)...)
		}
	}
	if len(late) > lateShown {
		out = append(out, fmt.Sprintf("DIAG and %d more late pods", len(late)-lateShown))
	}
	return append(out, b.diagnoseUnregistered(ctx, d)...)
}

// diagnoseUnregistered counts the claims whose Node has not registered and
// describes the first few.
func (b *bed) diagnoseUnregistered(ctx context.Context, d diagSources) []string {
	claims, err := b.claims()
	if err != nil {
		return []string{fmt.Sprintf("DIAG listing the nodeclaims: %v", err)}
	}
	var unregistered []string
	for _, c := range claims {
		if !meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ConditionRegistered) {
			unregistered = append(unregistered, c.Name)
		}
	}
	slices.Sort(unregistered)
	out := []string{fmt.Sprintf("DIAG claims=%d unregistered=%d", len(claims), len(unregistered))}
	for _, name := range unregistered[:min(len(unregistered), lateShown)] {
		out = append(out, b.diagnoseClaim(ctx, d, name)...)
	}
	return out
}

// diagnoseClaim describes a claim a late pod was nominated to: its
// conditions and node, the emulator's instances for it, and the operator's
// log lines naming it, so a claim that never registered says where it stopped.
func (b *bed) diagnoseClaim(ctx context.Context, d diagSources, name string) []string {
	var claim v1alpha1.NodeClaim
	out := []string{}
	if err := b.Admin.Get(ctx, client.ObjectKey{Name: name}, &claim); err != nil {
		out = append(out, fmt.Sprintf("DIAG claim=%s: %v", name, err))
	} else {
		var conds []string
		for _, c := range claim.Status.Conditions {
			conds = append(conds, fmt.Sprintf("%s=%s(%s %s)", c.Type, c.Status, c.Reason, c.LastTransitionTime.UTC().Format("15:04:05")))
		}
		out = append(out, fmt.Sprintf("DIAG claim=%s created=%s deleting=%v node=%q provider=%q conditions=%s", name,
			claim.CreationTimestamp.UTC().Format("15:04:05"), claim.DeletionTimestamp != nil, claim.Status.NodeName,
			claim.Status.ProviderID, strings.Join(conds, ",")))
	}
	for _, in := range d.instances[name] {
		out = append(out, fmt.Sprintf("DIAG claim=%s instance=%s state=%s type=%s zone=%s", name, in.ID, in.State, in.InstanceType, in.Zone))
	}
	return append(out, d.logLines("claim="+name, name)...)
}

// diagSources are what a diagnosis reads once and looks things up in: the
// operator's log lines and the emulator's instances by claim.
type diagSources struct {
	logs      []string
	instances map[string][]awsemu.Instance
}

// logLines are the last operator log lines that mention what.
func (d diagSources) logLines(prefix, what string) []string {
	var lines []string
	for _, line := range d.logs {
		if strings.Contains(line, what) {
			lines = append(lines, fmt.Sprintf("DIAG %s log=%s", prefix, line))
		}
	}
	return lines[max(0, len(lines)-logLinesShown):]
}

// diagScheduled is the pod's PodScheduled condition as reason: message.
func diagScheduled(pod *corev1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message)
		}
	}
	return ""
}

// diagEventTime is when the event last happened, in Unix nanoseconds.
func diagEventTime(e eventsv1.Event) int64 {
	if e.Series != nil {
		return e.Series.LastObservedTime.UnixNano()
	}
	if !e.EventTime.IsZero() {
		return e.EventTime.UnixNano()
	}
	return e.DeprecatedLastTimestamp.UnixNano()
}

func diagEventClock(e eventsv1.Event) string {
	return time.Unix(0, diagEventTime(e)).UTC().Format("15:04:05")
}

// diagEventCount is how many times the event happened.
func diagEventCount(e eventsv1.Event) int32 {
	if e.Series != nil {
		return e.Series.Count
	}
	return max(1, e.DeprecatedCount)
}
