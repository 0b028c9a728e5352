package events_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/stowage-dev/stowage/controller/events"
)

type recorder struct{ notes, reasons []string }

func (r *recorder) Eventf(_, _ runtime.Object, _, reason, _, note string, args ...any) {
	r.reasons = append(r.reasons, reason)
	r.notes = append(r.notes, strings.ReplaceAll(note, "%s", args[0].(string)))
}

func TestPublishCutsLongNotesOnACharacterBoundary(t *testing.T) {
	rec := &recorder{}
	long := strings.Repeat("é", events.MaxNote) // two bytes each
	events.Publish(rec, events.Event{Regarding: &corev1.Node{}, Reason: "A", Note: "short"}, events.Event{Reason: "B", Note: long})
	if len(rec.notes) != 2 || rec.notes[0] != "short" {
		t.Fatalf("notes %q", rec.notes)
	}
	cut := rec.notes[1]
	if len(cut) > events.MaxNote || !strings.HasSuffix(cut, "...") || !utf8.ValidString(cut) {
		t.Errorf("cut note is %d bytes, suffix %q, valid UTF-8 %v", len(cut), cut[len(cut)-3:], utf8.ValidString(cut))
	}
	events.Publish(nil, events.Event{Reason: "C"}) // a nil recorder publishes nothing, and does not panic
}
