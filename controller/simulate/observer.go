package simulate

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/provisioning"
)

// observer watches a run without changing it: it is told after every instant
// the world steps, of every event the provisioner publishes and every warning
// the other controllers record, and once at the end. The invariant checker (invariants.go) is one.
type observer interface {
	// instant runs after every part of the world has stepped at the current instant.
	instant(w *world)
	// published hears the provisioner's events as it publishes them.
	published(w *world, evs []provisioning.Event)
	// warned hears a controller's warning event about an object.
	warned(w *world, reason, object, note string)
	// end runs once the run is over, after the world's final accounting.
	end(w *world)
	// lost hears of a pod still on an instance when the instance terminated.
	lost(w *world, sp *simPod, instance string)
	// left hears of a pod being deleted or gone, as it was last stored.
	left(w *world, pod *corev1.Pod)
}

func (w *world) observeInstant() {
	if w.observer != nil {
		w.observer.instant(w)
	}
}

func (w *world) observePublished(evs []provisioning.Event) {
	if w.observer != nil {
		w.observer.published(w, evs)
	}
}

func (w *world) observeWarning(reason, object, note string) {
	if w.observer != nil {
		w.observer.warned(w, reason, object, note)
	}
}

func (w *world) observeEnd() {
	if w.observer != nil {
		w.observer.end(w)
	}
}

func (w *world) observeLost(sp *simPod, instance string) {
	if w.observer != nil {
		w.observer.lost(w, sp, instance)
	}
}

func (w *world) observeLeft(pod *corev1.Pod) {
	if w.observer != nil {
		w.observer.left(w, pod)
	}
}
