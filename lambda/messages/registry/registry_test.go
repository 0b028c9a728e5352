package registry_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/lambda/messages"
	"github.com/stowage-dev/stowage/lambda/messages/registry"
)

// testdata is the Lambda's sample folder.
const testdata = "../../testdata"

// want is what one sample parses into: a message, an unknown event, or a
// *FieldError naming field.
type want struct {
	kind        string
	deadline    string // RFC 3339; empty for none
	ids         []string
	reservation string // the reservation whose Nodes are marked
	unknown     bool
	field       string
}

var cases = map[string]want{
	"spot-interruption-terminate.json": {kind: v1alpha1.InterruptionKindSpotInterruption, deadline: "1970-01-01T00:02:00Z", ids: []string{"i-0b662ef9931388ba0"}},
	"spot-interruption-stop.json":      {kind: v1alpha1.InterruptionKindSpotInterruption, deadline: "2026-11-01T02:02:00Z", ids: []string{"i-0123456789abcdef0"}},
	"spot-interruption-hibernate.json": {kind: v1alpha1.InterruptionKindSpotInterruption, deadline: "2026-11-01T02:00:00Z", ids: []string{"i-0123456789abcdef1"}},
	"rebalance-recommendation.json":    {kind: v1alpha1.InterruptionKindRebalanceRecommendation, ids: []string{"i-0b662ef9931388ba0"}},
	"state-change-pending.json":        {ids: []string{"i-abcd1111"}},
	"state-change-running.json":        {ids: []string{"i-abcd1111"}},
	"state-change-stopping.json":       {kind: v1alpha1.InterruptionKindInstanceStopping, ids: []string{"i-abcd1111"}},
	"state-change-stopped.json":        {kind: v1alpha1.InterruptionKindInstanceStopping, ids: []string{"i-abcd1111"}},
	"state-change-shutting-down.json":  {kind: v1alpha1.InterruptionKindInstanceTerminating, ids: []string{"i-abcd1111"}},
	"state-change-terminated.json":     {kind: v1alpha1.InterruptionKindInstanceTerminating, ids: []string{"i-1234567890abcdef0"}},
	"health-scheduled-change-retirement.json": {kind: v1alpha1.InterruptionKindScheduledChange, deadline: "2018-11-01T22:00:00Z",
		ids: []string{"i-00ddbf07ce6372082"}},
	"health-scheduled-change-no-end-time.json": {kind: v1alpha1.InterruptionKindScheduledChange, deadline: "2026-11-01T02:00:00Z",
		ids: []string{"i-0fedcba9876543210"}},
	"health-scheduled-change-entities.json": {kind: v1alpha1.InterruptionKindScheduledChange, deadline: "2026-11-02T04:30:00Z",
		ids: []string{"i-0aaaaaaaaaaaaaaa1", "i-0aaaaaaaaaaaaaaa2", "i-0aaaaaaaaaaaaaaa3"}},
	"health-scheduled-change-closed.json": {},
	"health-scheduled-change-rds.json":    {},
	"health-issue-ec2.json":               {},
	"capacity-reservation-interruption.json": {kind: v1alpha1.InterruptionKindCapacityReservationInterruption,
		deadline: "2025-11-20T10:02:00Z", ids: []string{"i-1234567890abcdef0"}},
	"capacity-reservation-interruption-no-termination-time.json": {kind: v1alpha1.InterruptionKindCapacityReservationInterruption,
		deadline: "2025-11-20T10:02:00Z", ids: []string{"i-1234567890abcdef0"}},
	"capacity-block-interruption.json": {kind: v1alpha1.InterruptionKindCapacityReservationInterruption,
		deadline: "2025-11-20T10:02:00Z", ids: []string{"i-1234567890abcdef1"}},
	"capacity-reservation-interruption-interruptible-spelling.json": {kind: v1alpha1.InterruptionKindCapacityReservationInterruption,
		deadline: "2025-11-20T10:02:00Z", ids: []string{"i-1234567890abcdef0"}},
	"capacity-block-expiration-warning.json": {kind: v1alpha1.InterruptionKindCapacityBlockExpiration,
		deadline: "2026-11-01T07:30:00Z", reservation: "cr-0123456789abcdef0"},
	"capacity-block-expiration-warning-short-spelling.json": {kind: v1alpha1.InterruptionKindCapacityBlockExpiration,
		deadline: "2026-11-01T07:30:00Z", reservation: "cr-0123456789abcdef0"},
	"capacity-block-delivered.json":                {unknown: true},
	"malformed-capacity-block-bad-end-date.json":   {field: "detail.end-date"},
	"malformed-capacity-block-no-reservation.json": {field: "detail.capacity-reservation-id"},
	"unknown-detail-type.json":                     {unknown: true},
	"malformed-not-json.json":                      {field: "body"},
	"malformed-no-id.json":                         {field: "id"},
	"malformed-detail-not-object.json":             {field: "detail"},
	"malformed-spot-no-instance-id.json":           {field: "detail.instance-id"},
	"malformed-spot-bad-instance-id.json":          {field: "detail.instance-id"},
	"malformed-spot-unknown-action.json":           {field: "detail.instance-action"},
	"malformed-spot-bad-time.json":                 {field: "time"},
	"malformed-state-unknown.json":                 {field: "detail.state"},
	"malformed-health-bad-start-time.json":         {field: "detail.startTime"},
	"malformed-health-bad-entity.json":             {field: "detail.affectedEntities[0].entityValue"},
}

// TestEverySampleParsesAsExpected parses every EventBridge sample in
// testdata and checks the kind, deadline and instances, or the field an
// error names; a sample without a case fails.
func TestEverySampleParsesAsExpected(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testdata, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples in %s (%v)", testdata, err)
	}
	r := registry.New()
	for _, path := range files {
		name := filepath.Base(path)
		if strings.HasPrefix(name, "sqs-") {
			continue // an SQS event, read by the handler's tests
		}
		w, ok := cases[name]
		if !ok {
			t.Errorf("%s has no expected result: add it to the cases", name)
			continue
		}
		t.Run(name, func(t *testing.T) { check(t, r, path, w) })
	}
}

func check(t *testing.T, r *messages.Registry, path string, w want) {
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := r.Parse(body)
	switch {
	case w.unknown:
		if !messages.IsUnknown(err) {
			t.Fatalf("error %v, want an unknown event", err)
		}
		return
	case w.field != "":
		var fe *messages.FieldError
		if !errors.As(err, &fe) || fe.Field != w.field || fe.Problem == "" {
			t.Fatalf("error %v, want a field error naming %s", err, w.field)
		}
		return
	case err != nil:
		t.Fatalf("parsing: %v", err)
	}
	deadline := ""
	if !msg.Deadline.IsZero() {
		deadline = msg.Deadline.Format(time.RFC3339)
	}
	if msg.Kind != w.kind || deadline != w.deadline || !slices.Equal(msg.InstanceIDs, w.ids) || msg.CapacityReservationID != w.reservation {
		t.Errorf("got kind %q, deadline %q, instances %v, reservation %q; want %q, %q, %v, %q", msg.Kind, deadline, msg.InstanceIDs,
			msg.CapacityReservationID, w.kind, w.deadline, w.ids, w.reservation)
	}
	if msg.Kind == "" && msg.Reason == "" {
		t.Error("a message asking for nothing says no reason")
	}
	env, _ := messages.ParseEnvelope(body)
	if msg.EventID != env.ID || msg.EventID == "" {
		t.Errorf("event id %q, want the envelope's %q", msg.EventID, env.ID)
	}
}

// TestEveryKindHasAParserAndEveryParserAKind checks that the registry reads
// an event for every interruption kind, and that its keys are distinct.
func TestEveryKindHasAParserAndEveryParserAKind(t *testing.T) {
	produced := map[string]bool{}
	for _, w := range cases {
		produced[w.kind] = true
	}
	for _, kind := range v1alpha1.InterruptionKinds {
		if !produced[kind] {
			t.Errorf("no sample parses into kind %s", kind)
		}
	}
	if n := len(registry.New().Keys()); n != 8 {
		t.Errorf("%d registered (source, detail-type) pairs, want 8 (the capacity reservation and Capacity Block warnings "+
			"in both spellings, one for each other kind)", n)
	}
}
