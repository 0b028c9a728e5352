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

type putTargetsInput struct {
	Rule    string `json:"Rule"`
	Targets []struct {
		ID  string `json:"Id"`
		Arn string `json:"Arn"`
	} `json:"Targets"`
}

func (e *Emulator) serveEvents(w http.ResponseWriter, req request) {
	switch req.action {
	case "PutEvents":
		jsonCall(w, req, e.putEvents)
	case "PutRule":
		jsonCall(w, req, func(in struct{ Name string }) (any, *APIError) {
			return map[string]string{"RuleArn": "arn:aws:events:" + e.cfg.Region + ":" + e.cfg.AccountID + ":rule/" + in.Name}, nil
		})
	case "PutTargets":
		jsonCall(w, req, e.putTargets)
	default:
		writeJSONError(w, "events", http.StatusBadRequest, "InvalidAction", "unknown EventBridge action "+req.action)
	}
}

// putEvents publishes each entry to the sink and the routed queues; an entry
// whose Detail is not a JSON object fails alone, as EventBridge reports it.
func (e *Emulator) putEvents(in putEventsInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := struct {
		Entries          []putEventsResult `json:"Entries"`
		FailedEntryCount int               `json:"FailedEntryCount"`
	}{}
	for _, en := range in.Entries {
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

// putTargets routes every event to the SQS queues named by the targets' ARNs.
func (e *Emulator) putTargets(in putTargetsInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, t := range in.Targets {
		parts := strings.Split(t.Arn, ":")
		if len(parts) == 6 && parts[2] == "sqs" {
			e.sqs.eventQueues = append(e.sqs.eventQueues, parts[5])
		}
	}
	return map[string]any{"FailedEntryCount": 0, "FailedEntries": []any{}}, nil
}
