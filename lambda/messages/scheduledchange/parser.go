package scheduledchange

import (
	"fmt"
	"strings"
	"time"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/lambda/messages"
)

// What the parser acts on.
const (
	ServiceEC2              = "EC2"
	CategoryScheduledChange = "scheduledChange"
	statusClosed            = "closed"
	entityResolved          = "RESOLVED"
)

// healthTimeLayouts are the forms of startTime: RFC 1123 with a one- or
// two-digit day, then RFC 3339.
var healthTimeLayouts = []string{"Mon, 2 Jan 2006 15:04:05 MST", "Mon, 2 Jan 2006 15:04:05 -0700", time.RFC3339}

// Parser reads AWS Health events.
type Parser struct{}

// Keys implements messages.Parser.
func (Parser) Keys() []messages.Key {
	return []messages.Key{{Source: "aws.health", DetailType: "AWS Health Event"}}
}

// Parse marks every affected instance of an open EC2 scheduled change
// scheduled-change, due at the change's start. Other services and
// categories, closed events and entities that are not instances ask for
// nothing.
func (Parser) Parse(env messages.Envelope) (messages.Message, error) {
	var d Detail
	if err := messages.DecodeDetail(env, &d); err != nil {
		return messages.Message{}, err
	}
	if d.Service == "" {
		return messages.Message{}, messages.Fieldf("detail.service", "missing; every AWS Health event names its service")
	}
	if d.EventTypeCategory == "" {
		return messages.Message{}, messages.Fieldf("detail.eventTypeCategory", "missing; every AWS Health event has a category")
	}
	if d.Service != ServiceEC2 || d.EventTypeCategory != CategoryScheduledChange {
		return messages.Message{Reason: fmt.Sprintf("a %s event of service %s", d.EventTypeCategory, d.Service)}, nil
	}
	if d.StatusCode == statusClosed {
		return messages.Message{Reason: "the scheduled change " + d.EventTypeCode + " is closed"}, nil
	}
	start, err := healthTime("detail.startTime", d.StartTime)
	if err != nil {
		return messages.Message{}, err
	}
	ids, err := instances(d.AffectedEntities)
	if err != nil {
		return messages.Message{}, err
	}
	if len(ids) == 0 {
		return messages.Message{Reason: "no instance among the affected entities of " + d.EventTypeCode}, nil
	}
	return messages.Message{Kind: v1alpha1.InterruptionKindScheduledChange, Deadline: start, InstanceIDs: ids}, nil
}

// instances returns the instance ids among the entities that are not
// resolved, once each, in order.
func instances(entities []Entity) ([]string, error) {
	var ids []string
	seen := map[string]bool{}
	for i, e := range entities {
		value := e.EntityValue
		if arn, ok := strings.CutPrefix(value, "arn:"); ok && strings.Contains(arn, ":instance/") {
			value = arn[strings.LastIndex(arn, "/")+1:]
		}
		if !strings.HasPrefix(value, "i-") || e.Status == entityResolved {
			continue
		}
		id, err := messages.InstanceID(fmt.Sprintf("detail.affectedEntities[%d].entityValue", i), value)
		if err != nil {
			return nil, err
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// healthTime reads an AWS Health time.
func healthTime(field, value string) (time.Time, error) {
	if value == "" {
		return time.Time{}, messages.Fieldf(field, "missing; a scheduled change names its start, e.g. Thu, 1 Nov 2018 22:00:00 GMT")
	}
	for _, layout := range healthTimeLayouts {
		if t, err := time.Parse(layout, value); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, messages.Fieldf(field, "%q is not a time such as Thu, 1 Nov 2018 22:00:00 GMT", messages.Cut(value))
}
