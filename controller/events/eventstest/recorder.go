// Package eventstest is an events.EventRecorder for tests that keeps what it
// is given.
package eventstest

import (
	"fmt"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Recorded is one event as a test reads it: the names of the objects it is
// about and names, its type, reason and note.
type Recorded struct {
	Object, Related, Type, Reason, Note string
}

// Recorder keeps every event; safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	events []Recorded
}

// Eventf records an event.
func (r *Recorder) Eventf(regarding, related runtime.Object, eventType, reason, _, note string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, Recorded{Object: name(regarding), Related: name(related), Type: eventType,
		Reason: reason, Note: fmt.Sprintf(note, args...)})
}

func name(o runtime.Object) string {
	if m, ok := o.(metav1.Object); ok {
		return m.GetName()
	}
	return ""
}

// Find returns the events about object with reason, in order.
func (r *Recorder) Find(object, reason string) []Recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Recorded
	for _, e := range r.events {
		if e.Object == object && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// All renders every event on one line, for failure messages.
func (r *Recorder) All() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, e := range r.events {
		fmt.Fprintf(&b, "[%s %s %s: %s] ", e.Object, e.Type, e.Reason, e.Note)
	}
	return b.String()
}
