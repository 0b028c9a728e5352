package handler_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stowage-dev/stowage/lambda/handler"
)

// FuzzInvoke feeds the Lambda's entry point arbitrary payloads, starting
// from every sample in testdata bare and wrapped in an SQS event: it must
// never panic, and an SQS payload must get back only failures naming its
// own records.
func FuzzInvoke(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(testdata, "*.json"))
	for _, path := range files {
		body, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body)
		wrapped, _ := json.Marshal(batch(body))
		f.Add(wrapped)
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		e := newEnv(t, handler.Config{Rebalance: handler.RebalanceMark}, nodeFor("i-0b662ef9931388ba0"), nodeFor("i-abcd1111"))
		out, err := e.h.Invoke(context.Background(), payload)
		resp, ok := out.(events.SQSEventResponse)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("an SQS payload got an error: %v", err)
		}
		var ev events.SQSEvent
		_ = json.Unmarshal(payload, &ev)
		ids := map[string]bool{}
		for _, r := range ev.Records {
			ids[r.MessageId] = true
		}
		for _, f := range resp.BatchItemFailures {
			if !ids[f.ItemIdentifier] {
				t.Fatalf("failure %q names no record of the batch", f.ItemIdentifier)
			}
		}
	})
}
