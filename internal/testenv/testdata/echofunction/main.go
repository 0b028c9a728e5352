// Command echofunction is a Lambda function for the RIE tests: it answers
// its payload and the GREETING variable, and fails on the payload "fail".
package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(func(_ context.Context, payload json.RawMessage) (map[string]any, error) {
		if string(payload) == `"fail"` {
			return nil, errors.New("asked to fail")
		}
		return map[string]any{"payload": payload, "greeting": os.Getenv("GREETING"), "home": os.Getenv("KUBECONFIG")}, nil
	})
}
