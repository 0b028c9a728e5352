// Package events is how Stowage's controllers publish Kubernetes events: one
// Event shape, whose constructors each controller keeps beside its code so
// that every reason and wording lives in one place, and one Publish that keeps
// to the events.k8s.io API's limits.
package events

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	k8sevents "k8s.io/client-go/tools/events"
)

// MaxNote is the longest note events.k8s.io/v1 accepts, in bytes.
const MaxNote = 1024

// Event is one Kubernetes event.
type Event struct {
	// Regarding is what the event is about; Related a second object it names, or nil.
	Regarding, Related runtime.Object
	// Type is Normal or Warning.
	Type   string
	Reason string
	// Action is what the controller did or failed to do, e.g. "Launch".
	Action string
	Note   string
}

// Publish records each event on rec (nothing when rec is nil: events are best
// effort), its note cut to MaxNote.
func Publish(rec k8sevents.EventRecorder, evs ...Event) {
	if rec == nil {
		return
	}
	for _, e := range evs {
		rec.Eventf(e.Regarding, e.Related, e.Type, e.Reason, e.Action, "%s", Note(e.Note))
	}
}

// Note cuts a note to MaxNote bytes, ending it with "..." and never splitting
// a UTF-8 sequence.
func Note(note string) string {
	if len(note) <= MaxNote {
		return note
	}
	return strings.ToValidUTF8(note[:MaxNote-len("...")], "") + "..."
}
