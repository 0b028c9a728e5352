package e2e_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// lateShown bounds how many late pods a failed envelope step describes.
const lateShown = 5

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
	for _, name := range late[:min(len(late), lateShown)] {
		var pod corev1.Pod
		if err := b.Admin.Get(ctx, client.ObjectKey{Namespace: envelopeNS, Name: name}, &pod); err != nil {
			out = append(out, fmt.Sprintf("DIAG pod=%s: %v", name, err))
			continue
		}
		out = append(out, fmt.Sprintf("DIAG pod=%s created=%s phase=%s node=%q nominated=%q scheduled=%q", name,
			pod.CreationTimestamp.UTC().Format("15:04:05"), pod.Status.Phase, pod.Spec.NodeName, pod.Status.NominatedNodeName, diagScheduled(&pod)))
		for _, e := range events.Items {
			if e.Regarding.Kind == "Pod" && e.Regarding.Name == name {
				out = append(out, fmt.Sprintf("DIAG pod=%s event at=%s from=%s reason=%s count=%d note=%q", name,
					diagEventClock(e), e.ReportingController, e.Reason, diagEventCount(e), e.Note))
			}
		}
	}
	if len(late) > lateShown {
		out = append(out, fmt.Sprintf("DIAG and %d more late pods", len(late)-lateShown))
	}
	return out
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
