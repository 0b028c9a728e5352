package awsemu

import (
	"fmt"
	"time"
)

// ScheduledChange is an AWS Health scheduled change of EC2 instances, such
// as a retirement or a maintenance reboot.
type ScheduledChange struct {
	// EventTypeCode names the change, e.g. AWS_EC2_PERSISTENT_INSTANCE_RETIREMENT_SCHEDULED.
	EventTypeCode string
	// Start is when the change happens; End, when set, when its window closes.
	Start, End time.Time
	// InstanceIDs are the affected instances.
	InstanceIDs []string
	// Description is the event's text; a sentence naming the change when empty.
	Description string
}

// healthTimeLayout is how AWS Health writes times in its events: RFC 1123
// in GMT with a day of one or two digits ("Thu, 1 Nov 2018 22:00:00 GMT").
const healthTimeLayout = "Mon, 2 Jan 2006 15:04:05 GMT"

// ScheduleChange raises the AWS Health Event (service EC2, category
// scheduledChange, status upcoming) of a change to pending or running
// instances, in the shape of AWS's events: the instance ids as resources and
// affected entities. The emulator only announces the change; it does not
// carry it out at Start.
func (e *Emulator) ScheduleChange(c ScheduledChange) error {
	if c.EventTypeCode == "" || c.Start.IsZero() || len(c.InstanceIDs) == 0 {
		return fmt.Errorf("scheduling a change: an event type code, a start and instances are required")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	entities := make([]map[string]any, 0, len(c.InstanceIDs))
	for _, id := range c.InstanceIDs {
		if _, err := e.liveInstanceLocked(id); err != nil {
			return err
		}
		entities = append(entities, map[string]any{"entityValue": id, "tags": map[string]string{}})
	}
	id := e.newID("evt")
	description := c.Description
	if description == "" {
		description = fmt.Sprintf("%s: EC2 has scheduled a change to your instances from %s.", c.EventTypeCode, c.Start.UTC().Format(time.RFC3339))
	}
	detail := map[string]any{
		"eventArn": fmt.Sprintf("arn:aws:health:%s::event/EC2/%s/%s_%s", e.cfg.Region, c.EventTypeCode, c.EventTypeCode, id),
		"service":  "EC2", "eventTypeCode": c.EventTypeCode, "eventTypeCategory": "scheduledChange",
		"eventRegion": e.cfg.Region, "statusCode": "upcoming",
		"startTime":        c.Start.UTC().Format(healthTimeLayout),
		"eventDescription": []map[string]string{{"language": "en_US", "latestDescription": description}},
		"affectedEntities": entities,
	}
	if !c.End.IsZero() {
		detail["endTime"] = c.End.UTC().Format(healthTimeLayout)
	}
	e.publishLocked(envelope(e.cfg, id, sourceHealth, "AWS Health Event", e.clk.Now(), append([]string(nil), c.InstanceIDs...), detail))
	return nil
}
