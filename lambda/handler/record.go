package handler

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/interruption"
	"github.com/stowage-dev/stowage/lambda/marker"
	"github.com/stowage-dev/stowage/lambda/messages"
)

// Kinds of the metrics besides the interruption kinds.
const (
	// KindNone: an event that asks for nothing (a running instance, another
	// AWS Health category or service).
	KindNone = "none"
	// KindUnknown: an event no parser reads.
	KindUnknown = "unknown"
	// KindMalformed: a record that could not be parsed.
	KindMalformed = "malformed"
)

// Record results.
const (
	resultMarked  = "marked"
	resultIgnored = "ignored"
	resultFailed  = "failed"
)

// outcome is what became of one record: its kind, its result, and the error
// that failed it.
type outcome struct {
	kind, result string
	err          error
}

func (o outcome) failed() bool { return o.result == resultFailed }

// handle parses one event and marks the Nodes it names; it logs one line.
func (h *Handler) handle(ctx context.Context, log hclog.Logger, body []byte) outcome {
	msg, err := h.registry.Parse(body)
	var fe *messages.FieldError
	switch {
	case messages.IsUnknown(err):
		log.Info("event ignored", "reason", err.Error())
		return outcome{kind: KindUnknown, result: resultIgnored}
	case errors.As(err, &fe):
		log.Error("malformed event", "field", fe.Field, "error", fe.Problem)
		return outcome{kind: KindMalformed, result: resultFailed, err: fmt.Errorf("reading the event: %w", err)}
	case err != nil:
		log.Error("malformed event", "error", err.Error())
		return outcome{kind: KindMalformed, result: resultFailed, err: err}
	}
	log = log.With("event_id", msg.EventID, "detail_type", msg.DetailType)
	if msg.Kind == "" {
		log.Info("event ignored", "reason", msg.Reason, "instance_id", first(msg.InstanceIDs))
		return outcome{kind: KindNone, result: resultIgnored}
	}
	if msg.Kind == v1alpha1.InterruptionKindRebalanceRecommendation && h.cfg.Rebalance != RebalanceMark {
		log.Info("event ignored", "kind", msg.Kind, "instance_id", first(msg.InstanceIDs),
			"reason", "rebalance recommendations are set to "+h.cfg.Rebalance)
		return outcome{kind: msg.Kind, result: resultIgnored}
	}
	return h.mark(ctx, log, msg)
}

// mark marks the Node of every instance the message names.
func (h *Handler) mark(ctx context.Context, log hclog.Logger, msg messages.Message) outcome {
	mark := interruption.Mark{Kind: msg.Kind, Deadline: msg.Deadline, EventID: msg.EventID}
	deadline := ""
	if !msg.Deadline.IsZero() {
		deadline = msg.Deadline.Format(time.RFC3339)
	}
	log = log.With("kind", msg.Kind, "deadline", deadline)
	if msg.CapacityReservationID != "" {
		return h.markReservation(ctx, log, msg, mark)
	}
	out := outcome{kind: msg.Kind, result: resultIgnored}
	for _, id := range msg.InstanceIDs {
		res, node, err := h.marker.Mark(ctx, id, mark)
		if err != nil {
			log.Error("marking failed", "instance_id", id, "node", node, "error", err.Error())
			return outcome{kind: msg.Kind, result: resultFailed, err: err}
		}
		if res == marker.Marked {
			out.result = resultMarked
			log.Info("node marked", "instance_id", id, "node", node)
			continue
		}
		log.Info("node left as it was", "instance_id", id, "node", node, "reason", res.String())
	}
	return out
}

// markReservation marks the Nodes of the reservation the message names.
func (h *Handler) markReservation(ctx context.Context, log hclog.Logger, msg messages.Message, mark interruption.Mark) outcome {
	log = log.With("capacity_reservation", msg.CapacityReservationID)
	results, err := h.marker.MarkReservation(ctx, msg.CapacityReservationID, mark)
	if err != nil {
		log.Error("marking failed", "error", err.Error())
		return outcome{kind: msg.Kind, result: resultFailed, err: err}
	}
	out := outcome{kind: msg.Kind, result: resultIgnored}
	for _, node := range slices.Sorted(maps.Keys(results)) {
		if results[node] == marker.Marked {
			out.result = resultMarked
			log.Info("node marked", "node", node)
			continue
		}
		log.Info("node left as it was", "node", node, "reason", results[node].String())
	}
	if len(results) == 0 {
		log.Info("no node runs in the reservation")
	}
	return out
}

func first(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}
