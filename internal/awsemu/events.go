package awsemu

import (
	"encoding/json"
	"fmt"
	"time"
)

// Event is an EventBridge event envelope, as delivered to an SQS target.
type Event struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Account    string          `json:"account"`
	Time       string          `json:"time"`
	Region     string          `json:"region"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

// EventSink receives the events the emulator raises as AWS's services (spot
// and capacity reservation interruption warnings, rebalance recommendations,
// state changes, AWS Health scheduled changes) and the ones PutEvents is given.
// Publish is called with the emulator's lock held: it must not call back into
// the Emulator.
type EventSink interface {
	Publish(Event)
}

// SinkFunc adapts a function to EventSink.
type SinkFunc func(Event)

// Publish calls f.
func (f SinkFunc) Publish(ev Event) { f(ev) }

// SetEventSink sets where events go besides the queues named by RouteEventsToQueue.
func (e *Emulator) SetEventSink(s EventSink) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sink = s
}

// RouteEventsToQueue delivers every event as a message to the named SQS queue
// of this emulator, as an EventBridge rule with an SQS target would.
func (e *Emulator) RouteEventsToQueue(queueName string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sqs.eventQueues = append(e.sqs.eventQueues, queueName)
}

func (e *Emulator) publishLocked(ev Event) {
	if e.sink != nil {
		e.sink.Publish(ev)
	}
	if len(e.sqs.eventQueues) == 0 && len(e.bus.rules) == 0 {
		return
	}
	body, err := json.Marshal(ev)
	if err != nil {
		e.log.Warn("encoding event", "error", err)
		return
	}
	e.deliverToRulesLocked(ev, body)
	for _, name := range e.sqs.eventQueues {
		if q, ok := e.sqs.byName[name]; ok {
			e.enqueueLocked(q, string(body), 0)
		}
	}
}

// Sources of the events AWS services send; only the emulator's own service
// side sends them (PutEvents refuses them, as EventBridge does).
const (
	sourceEC2    = "aws.ec2"
	sourceHealth = "aws.health"
)

func envelope(cfg Config, id, source, detailType string, at time.Time, resources []string, detail any) Event {
	raw, _ := json.Marshal(detail) //nolint:errchkjson // maps of strings and slices always encode
	return Event{
		Version: "0", ID: id, DetailType: detailType, Source: source,
		Account: cfg.AccountID, Time: at.UTC().Format(time.RFC3339), Region: cfg.Region,
		Resources: resources, Detail: raw,
	}
}

// instanceARN is an instance's ARN as state-change and capacity reservation
// events name it; spot and rebalance events put the zone in the region's
// place and leave the account out (zonalInstanceARN), as AWS's samples do.
func instanceARN(cfg Config, id string) string {
	return fmt.Sprintf("arn:aws:ec2:%s:%s:instance/%s", cfg.Region, cfg.AccountID, id)
}

func zonalInstanceARN(in *Instance) string {
	return fmt.Sprintf("arn:aws:ec2:%s:instance/%s", in.Zone, in.ID)
}

func stateChangeEvent(cfg Config, in *Instance, at time.Time) Event {
	return envelope(cfg, fmt.Sprintf("state-%s-%s-%d", in.ID, in.State, at.UnixNano()), sourceEC2,
		"EC2 Instance State-change Notification", at, []string{instanceARN(cfg, in.ID)},
		map[string]string{"instance-id": in.ID, "state": in.State})
}

// liveInstanceLocked is a pending or running instance: the only ones AWS
// warns about.
func (e *Emulator) liveInstanceLocked(id string) (*Instance, error) {
	e.advanceLocked()
	in, ok := e.instances[id]
	if !ok {
		return nil, &NotFoundError{IDs: []string{id}}
	}
	if in.State != StatePending && in.State != StateRunning {
		return nil, fmt.Errorf("instance %s is %s: AWS warns only about pending and running instances", id, in.State)
	}
	return in, nil
}

// Interrupt raises a spot interruption warning for a running spot instance: the
// EventBridge event goes to the sink now, and the instance starts shutting down
// after Config.InterruptionNotice on the clock.
func (e *Emulator) Interrupt(id string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	in, err := e.liveInstanceLocked(id)
	if err != nil {
		return err
	}
	if in.CapacityType != CapacitySpot {
		return fmt.Errorf("interrupting %s: not a spot instance", id)
	}
	now := e.clk.Now()
	in.InterruptAt = now.Add(e.cfg.InterruptionNotice)
	e.wakeLocked(in)
	e.publishLocked(envelope(e.cfg, e.newID("evt"), sourceEC2, "EC2 Spot Instance Interruption Warning", now,
		[]string{zonalInstanceARN(in)}, map[string]string{"instance-id": in.ID, "instance-action": "terminate"}))
	return nil
}

// Rebalance raises an EC2 instance rebalance recommendation for an instance.
func (e *Emulator) Rebalance(id string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	in, err := e.liveInstanceLocked(id)
	if err != nil {
		return err
	}
	e.publishLocked(envelope(e.cfg, e.newID("evt"), sourceEC2, "EC2 Instance Rebalance Recommendation", e.clk.Now(),
		[]string{zonalInstanceARN(in)}, map[string]string{"instance-id": in.ID}))
	return nil
}

// InterruptReserved raises an EC2 Capacity Reservation Instance Interruption
// Warning for an instance running in a capacity reservation (an interruptible
// one on AWS, whose owner takes the capacity back): like a spot warning, the
// instance starts shutting down after Config.InterruptionNotice.
func (e *Emulator) InterruptReserved(id string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	in, err := e.liveInstanceLocked(id)
	if err != nil {
		return err
	}
	if in.ReservationID == "" {
		return fmt.Errorf("interrupting %s: it runs in no capacity reservation", id)
	}
	now := e.clk.Now()
	in.InterruptAt = now.Add(e.cfg.InterruptionNotice)
	e.wakeLocked(in)
	e.publishLocked(envelope(e.cfg, e.newID("evt"), sourceEC2, "EC2 Capacity Reservation Instance Interruption Warning", now,
		[]string{instanceARN(e.cfg, in.ID)}, map[string]string{"instance-id": in.ID, "instance-action": "terminate",
			"instance-termination-time": in.InterruptAt.UTC().Format(time.RFC3339), "azId": e.zoneID(in.Zone)}))
	return nil
}
