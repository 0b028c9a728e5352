package messages

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Registry picks the parser of an event by its (source, detail-type).
type Registry struct {
	parsers map[Key]Parser
}

// NewRegistry registers the parsers; a key claimed twice is an error.
func NewRegistry(parsers ...Parser) (*Registry, error) {
	r := &Registry{parsers: map[Key]Parser{}}
	for _, p := range parsers {
		for _, k := range p.Keys() {
			if _, dup := r.parsers[k]; dup {
				return nil, fmt.Errorf("registering parsers: %q/%q is claimed twice", k.Source, k.DetailType)
			}
			r.parsers[k] = p
		}
	}
	return r, nil
}

// Keys lists the registered (source, detail-type) pairs.
func (r *Registry) Keys() []Key {
	out := make([]Key, 0, len(r.parsers))
	for k := range r.parsers {
		out = append(out, k)
	}
	return out
}

// Parse reads one event: the envelope, then the detail by its kind. An
// event no parser reads is an *UnknownError; every other error is a
// *FieldError.
func (r *Registry) Parse(body []byte) (Message, error) {
	env, err := ParseEnvelope(body)
	if err != nil {
		return Message{}, err
	}
	p, ok := r.parsers[Key{env.Source, env.DetailType}]
	if !ok {
		return Message{}, &UnknownError{Key{env.Source, env.DetailType}}
	}
	msg, err := p.Parse(env)
	if err != nil {
		return Message{}, err
	}
	msg.EventID, msg.Source, msg.DetailType = env.ID, env.Source, env.DetailType
	return msg, nil
}

// ParseEnvelope reads the envelope and checks the fields every kind needs:
// id, source, detail-type, and a detail that is a JSON object.
func ParseEnvelope(body []byte) (Envelope, error) {
	var env Envelope
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return Envelope{}, Fieldf("body", "not a JSON object; an EventBridge event was expected")
	}
	if err := json.Unmarshal(trimmed, &env); err != nil {
		return Envelope{}, Fieldf("body", "not an EventBridge event: %v", err)
	}
	for _, f := range []struct{ name, value string }{{"id", env.ID}, {"source", env.Source}, {"detail-type", env.DetailType}} {
		if f.value == "" {
			return Envelope{}, Fieldf(f.name, "missing or empty; every EventBridge event has one")
		}
	}
	if d := bytes.TrimSpace(env.Detail); len(d) == 0 || d[0] != '{' {
		return Envelope{}, Fieldf("detail", "missing or not a JSON object")
	}
	return env, nil
}

// DecodeDetail unmarshals env's detail into v.
func DecodeDetail(env Envelope, v any) error {
	if err := json.Unmarshal(env.Detail, v); err != nil {
		return Fieldf("detail", "%v", err)
	}
	return nil
}
