package awsemu

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

type putEventsEntry struct {
	Source     string   `json:"Source"`
	DetailType string   `json:"DetailType"`
	Detail     string   `json:"Detail"`
	Resources  []string `json:"Resources"`
	Time       *float64 `json:"Time"`
}

type putEventsInput struct {
	Entries []putEventsEntry `json:"Entries"`
}

type putEventsResult struct {
	EventID      string `json:"EventId,omitempty"`
	ErrorCode    string `json:"ErrorCode,omitempty"`
	ErrorMessage string `json:"ErrorMessage,omitempty"`
}

// eventsHandlers answer the EventBridge actions, one line each.
var eventsHandlers = map[string]func(e *Emulator, w http.ResponseWriter, req request){
	"PutEvents":         func(e *Emulator, w http.ResponseWriter, req request) { jsonCall(w, req, e.putEvents) },
	"PutRule":           func(e *Emulator, w http.ResponseWriter, req request) { jsonCall(w, req, e.putRule) },
	"DescribeRule":      func(e *Emulator, w http.ResponseWriter, req request) { jsonCall(w, req, e.describeRule) },
	"DeleteRule":        func(e *Emulator, w http.ResponseWriter, req request) { jsonCall(w, req, e.deleteRule) },
	"PutTargets":        func(e *Emulator, w http.ResponseWriter, req request) { jsonCall(w, req, e.putTargets) },
	"RemoveTargets":     func(e *Emulator, w http.ResponseWriter, req request) { jsonCall(w, req, e.removeTargets) },
	"ListTargetsByRule": func(e *Emulator, w http.ResponseWriter, req request) { jsonCall(w, req, e.listTargetsByRule) },
}

func (e *Emulator) serveEvents(w http.ResponseWriter, req request) {
	h, ok := eventsHandlers[req.action]
	if !ok {
		writeJSONError(w, "events", http.StatusBadRequest, "InvalidAction", "unknown EventBridge action "+req.action)
		return
	}
	h(e, w, req)
}

// putEvents publishes each entry to the sink and the routed queues. An entry
// fails alone, as EventBridge reports it, when its Detail is not a JSON
// object, or when its source is an AWS service's ("aws." and more), which
// only the service itself may send: the emulator's own events (events.go).
func (e *Emulator) putEvents(in putEventsInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := struct {
		Entries          []putEventsResult `json:"Entries"`
		FailedEntryCount int               `json:"FailedEntryCount"`
	}{}
	for _, en := range in.Entries {
		if strings.HasPrefix(en.Source, "aws.") {
			out.Entries = append(out.Entries, putEventsResult{ErrorCode: "NotAuthorizedForSourceException", ErrorMessage: "Not authorized for the source."})
			out.FailedEntryCount++
			continue
		}
		if !json.Valid([]byte(en.Detail)) || !strings.HasPrefix(strings.TrimSpace(en.Detail), "{") {
			out.Entries = append(out.Entries, putEventsResult{ErrorCode: "MalformedDetail", ErrorMessage: "Detail is malformed."})
			out.FailedEntryCount++
			continue
		}
		at := e.clk.Now()
		if en.Time != nil {
			at = time.Unix(int64(*en.Time), 0)
		}
		ev := Event{Version: "0", ID: e.newID("evt"), DetailType: en.DetailType, Source: en.Source,
			Account: e.cfg.AccountID, Time: at.UTC().Format(time.RFC3339), Region: e.cfg.Region,
			Resources: en.Resources, Detail: json.RawMessage(en.Detail)}
		if ev.Resources == nil {
			ev.Resources = []string{}
		}
		e.publishLocked(ev)
		out.Entries = append(out.Entries, putEventsResult{EventID: ev.ID})
	}
	return out, nil
}
