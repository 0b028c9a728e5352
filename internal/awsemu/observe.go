package awsemu

import "time"

// Call is one request the HTTP server received, as an observer hears of it.
type Call struct {
	// Action is the API action, e.g. CreateFleet.
	Action string
	// Received is when the server began reading the request, on the emulator's clock.
	Received time.Time
	// ClientToken is the request's idempotency token (EC2's ClientToken), empty
	// when it has none; CreateFleet's ties the call to the instances it launches.
	ClientToken string
	// InstanceTags are the tags the request asks its instances to carry
	// (TagSpecification of resource type instance), nil when it has none:
	// Stowage's name the NodeClaim a CreateFleet launches for.
	InstanceTags map[string]string
}

// OnCall registers observe to hear of every request the HTTP server receives,
// faulted ones included, before it is served. Observers run on the request's
// goroutine, outside the emulator's lock, so they must be quick and safe for
// concurrent use; they cannot be removed.
func (e *Emulator) OnCall(observe func(Call)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.observers = append(e.observers, observe)
}

// notifyCall tells every observer of the request received at that time.
func (e *Emulator) notifyCall(req request, received time.Time) {
	e.mu.Lock()
	observers := e.observers
	e.mu.Unlock()
	if len(observers) == 0 {
		return
	}
	c := Call{Action: req.action, Received: received, ClientToken: req.form.str("ClientToken"), InstanceTags: instanceTags(req.form)}
	for _, observe := range observers {
		observe(c)
	}
}

// instanceTags reads the instance tags of a query request's TagSpecification.
func instanceTags(p params) map[string]string {
	for _, m := range p.members("TagSpecification") {
		if p.str(m+".ResourceType") == "instance" {
			return p.tags(m + ".Tag")
		}
	}
	return nil
}
