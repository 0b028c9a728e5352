package provisioningrequest

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	provreqv1 "github.com/stowage-dev/stowage/controller/apis/autoscaling/v1"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// Kind is the booking owner kind of a request.
const Kind = "ProvisioningRequest"

// OwnerOf names a request as a booking owner.
func OwnerOf(pr *provreqv1.ProvisioningRequest) scheduler.BookingOwner {
	return scheduler.BookingOwner{Kind: Kind, Namespace: pr.Namespace, Name: pr.Name}
}

// Consumes returns the request a pod consumes (the name in its namespace),
// under either annotation, and whether it consumes one.
func Consumes(pod *corev1.Pod) (string, bool) {
	if name, ok := pod.Annotations[provreqv1.ConsumeAnnotation]; ok {
		return name, true
	}
	name, ok := pod.Annotations[provreqv1.DeprecatedConsumeAnnotation]
	return name, ok
}

// Want builds the request's pods, virtual: per pod set, Count pods of its
// PodTemplate, read through kube. A template not found is an error that
// names it.
func Want(ctx context.Context, kube client.Reader, pr *provreqv1.ProvisioningRequest) ([]*corev1.Pod, error) {
	owner := OwnerOf(pr)
	var out []*corev1.Pod
	for i, set := range pr.Spec.PodSets {
		tmpl := &corev1.PodTemplate{}
		if err := kube.Get(ctx, client.ObjectKey{Namespace: pr.Namespace, Name: set.PodTemplateRef.Name}, tmpl); err != nil {
			return nil, fmt.Errorf("podSets[%d].podTemplateRef: PodTemplate %s/%s: %w", i, pr.Namespace, set.PodTemplateRef.Name, err)
		}
		for _, pod := range scheduler.VirtualPods(owner, tmpl.Template, int(set.Count)) {
			pod.Name += "-" + strconv.Itoa(i) // unique across pod sets
			out = append(out, pod)
		}
	}
	return out, nil
}

// Consumers are the pods that consume a request: Bound ones (on a node, or
// finished) have taken their room; Waiting ones have not yet.
type Consumers struct {
	Bound, Waiting []*corev1.Pod
}

// ConsumersOf sorts pods (of the request's namespace) into the request's
// consumers, leaving out pods being deleted.
func ConsumersOf(pr *provreqv1.ProvisioningRequest, pods []corev1.Pod) Consumers {
	var c Consumers
	for i := range pods {
		pod := &pods[i]
		if name, ok := Consumes(pod); !ok || name != pr.Name || pod.DeletionTimestamp != nil {
			continue
		}
		if pod.Spec.NodeName != "" || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			c.Bound = append(c.Bound, pod)
		} else {
			c.Waiting = append(c.Waiting, pod)
		}
	}
	return c
}

// Unbound is what of the request still needs its room: the waiting
// consumers (as virtual copies) and the virtual pods no consumer has
// appeared for yet, the first of want.
func (c Consumers) Unbound(owner scheduler.BookingOwner, want []*corev1.Pod) []*corev1.Pod {
	left := max(len(want)-len(c.Bound)-len(c.Waiting), 0)
	out := make([]*corev1.Pod, 0, left+len(c.Waiting))
	for _, pod := range c.Waiting {
		v := pod.DeepCopy()
		v.UID = ""
		if v.Annotations == nil {
			v.Annotations = map[string]string{}
		}
		v.Annotations[scheduler.AnnotationBookedBy] = owner.String()
		out = append(out, v)
	}
	for _, pod := range want[:left] {
		out = append(out, pod.DeepCopy())
	}
	return out
}

// running reports whether the request still has pods to run: waiting ones,
// or bound ones that have not finished.
func (c Consumers) running() bool {
	return len(c.Waiting) > 0 || slices.ContainsFunc(c.Bound, func(p *corev1.Pod) bool {
		return p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
	})
}

// boundIn moves the waiting consumers that snap already has on a node to
// Bound: the state may see a binding before the pod list does, and a pod
// counted both on its node and as still to place would make the room look
// short.
func (c Consumers) boundIn(snap *scheduler.Snapshot) Consumers {
	on := map[types.NamespacedName]bool{}
	for _, n := range snap.Nodes {
		for _, pod := range n.Pods {
			on[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}] = true
		}
	}
	out := Consumers{Bound: slices.Clone(c.Bound)}
	for _, pod := range c.Waiting {
		if on[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}] {
			out.Bound = append(out.Bound, pod)
		} else {
			out.Waiting = append(out.Waiting, pod)
		}
	}
	return out
}
