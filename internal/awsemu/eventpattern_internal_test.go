package awsemu

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The events below are the documents' own: the EventBridge User Guide's
// "Event patterns", "Content filtering in event patterns", "Matching on null
// values and empty strings" and "Arrays in event patterns" pages, and Event
// Ruler's README (the library EventBridge matches with), whose examples are
// written against the same EC2 state-change event.

// rulerEvent is Event Ruler's README example event.
const rulerEvent = `{"version":"0","id":"ddddd4-aaaa-7777-4444-345dd43cc333","detail-type":"EC2 Instance State-change Notification",
	"source":"aws.ec2","account":"012345679012","time":"2017-10-02T16:24:49Z","region":"us-east-1",
	"resources":["arn:aws:ec2:us-east-1:123456789012:instance/i-000000aaaaaa00000"],
	"detail":{"c-count":5,"d-count":3,"x-limit":301.8,"source-ip":"10.0.0.33","instance-id":"i-000000aaaaaa00000","state":"running"}}`

// existsEvents are the content-filtering page's exists examples: a state and
// no c-count, and a c-count that is an object, not a leaf.
const (
	stateOnly    = `{"detail-type":"EC2 Instance State-change Notification","detail":{"state":"pending","instance-id":"i-abcd1111"}}`
	countIsInner = `{"detail-type":"EC2 Instance State-change Notification","detail":{"c-count":{"c1":100}}}`
)

// employees is the arrays example: objects in an array.
const employees = `{"employees":[{"firstName":"John","lastName":"Doe"},{"firstName":"Anna","lastName":"Smith"},{"firstName":"Peter","lastName":"Jones"}]}`

func TestEventPatternsMatchTheDocumentsExamples(t *testing.T) {
	files := `{"FilePath":"dir/sub/lib/photo.png","FileName":"photo.PNG","Name":"Alice","service":"EventBridge","LastName":"","UserID":null,` +
		`"Region":"us-east-2","EventBusArn":"arn:aws:events:us-east-1:123456789012:event-bus/orders","Weather":"Sunny","Price":100,"Glob":"a*b/c"}`
	for _, tc := range []struct {
		name, pattern, event string
		want                 bool
	}{
		{"simple: event array against rule array", `{"detail-type":["EC2 Instance State-change Notification"],"resources":["arn:aws:ec2:us-east-1:123456789012:instance/i-000000aaaaaa00000"],"detail":{"state":["initializing","running"]}}`, rulerEvent, true},
		{"prefix", `{"time":[{"prefix":"2017-10-02"}]}`, rulerEvent, true},
		{"prefix of another day", `{"time":[{"prefix":"2017-10-03"}]}`, rulerEvent, false},
		{"suffix", `{"source":[{"suffix":"ec2"}]}`, rulerEvent, true},
		{"equals-ignore-case is no substring", `{"source":[{"equals-ignore-case":"EC2"}]}`, rulerEvent, false},
		{"equals-ignore-case", `{"Name":[{"equals-ignore-case":"alice"}]}`, files, true},
		{"prefix ignoring case", `{"service":[{"prefix":{"equals-ignore-case":"eventb"}}]}`, files, true},
		{"suffix ignoring case", `{"FileName":[{"suffix":{"equals-ignore-case":".png"}}]}`, files, true},
		{"suffix is case-sensitive", `{"FileName":[{"suffix":".png"}]}`, files, false},
		{"anything-but a string", `{"detail":{"state":[{"anything-but":"initializing"}]}}`, rulerEvent, true},
		{"anything-but a number", `{"detail":{"x-limit":[{"anything-but":123}]}}`, rulerEvent, true},
		{"anything-but a list of strings", `{"detail":{"state":[{"anything-but":["stopped","running"]}]}}`, rulerEvent, false},
		{"anything-but a list of numbers", `{"detail":{"x-limit":[{"anything-but":[100,200,300]}]}}`, rulerEvent, true},
		{"anything-but a prefix", `{"detail":{"state":[{"anything-but":{"prefix":"run"}}]}}`, rulerEvent, false},
		{"anything-but a suffix", `{"FileName":[{"anything-but":{"suffix":".png"}}]}`, files, true},
		{"anything-but ignoring case", `{"detail":{"state":[{"anything-but":{"equals-ignore-case":["RUNNING","stopped"]}}]}}`, rulerEvent, false},
		{"anything-but a wildcard", `{"FilePath":[{"anything-but":{"wildcard":"*/lib/*"}}]}`, files, false},
		{"anything-but needs the field", `{"detail":{"missing":[{"anything-but":"x"}]}}`, rulerEvent, false},
		{"numeric range", `{"detail":{"c-count":[{"numeric":[">",0,"<=",5]}],"d-count":[{"numeric":["<",10]}],"x-limit":[{"numeric":["=",3.018e2]}]}}`, rulerEvent, true},
		{"numeric open bound", `{"detail":{"c-count":[{"numeric":[">",5]}]}}`, rulerEvent, false},
		{"numeric on a string", `{"detail":{"state":[{"numeric":[">",0]}]}}`, rulerEvent, false},
		{"a number equals its other spelling", `{"Price":[1e2]}`, files, true},
		{"a string is no number", `{"Price":["100"]}`, files, false},
		{"cidr", `{"detail":{"source-ip":[{"cidr":"10.0.0.0/24"}]}}`, rulerEvent, true},
		{"cidr outside", `{"detail":{"source-ip":[{"cidr":"10.0.1.0/24"}]}}`, rulerEvent, false},
		{"the complex example", `{"time":[{"prefix":"2017-10-02"}],"detail":{"state":[{"anything-but":"initializing"}],"c-count":[{"numeric":[">",0,"<=",5]}],` +
			`"d-count":[{"numeric":["<",10]}],"x-limit":[{"anything-but":[100,200,300]}],"source-ip":[{"cidr":"10.0.0.0/8"}]}}`, rulerEvent, true},
		{"exists true", `{"detail":{"state":[{"exists":true}]}}`, stateOnly, true},
		{"exists true on an inner node", `{"detail":{"c-count":[{"exists":true}]}}`, countIsInner, false},
		{"exists false", `{"detail":{"c-count":[{"exists":false}]}}`, stateOnly, true},
		{"exists false: an inner node is no leaf", `{"detail":{"c-count":[{"exists":false}]}}`, countIsInner, true},
		{"exists false on a field that is there", `{"detail":{"state":[{"exists":false}]}}`, stateOnly, false},
		{"exists false under a missing object", `{"other":{"x":[{"exists":false}]}}`, stateOnly, true},
		{"null", `{"UserID":[null]}`, files, true},
		{"null is not missing", `{"Nobody":[null]}`, files, false},
		{"empty string", `{"LastName":[""]}`, files, true},
		{"empty string is not null", `{"UserID":[""]}`, files, false},
		{"wildcard", `{"source":[{"wildcard":"aws.*2"}]}`, rulerEvent, true},
		{"wildcard in the middle", `{"FilePath":[{"wildcard":"dir/*.png"}]}`, files, true},
		{"wildcard crosses slashes", `{"resources":[{"wildcard":"arn:aws:ec2:*"}]}`, rulerEvent, true},
		{"wildcards across an ARN", `{"EventBusArn":[{"wildcard":"arn:aws:events:us-east-1:*:event-bus/*"}]}`, files, true},
		{"wildcard: ? is no metacharacter", `{"detail":{"instance-id":[{"wildcard":"i-?00000aaaaaa00000"}]}}`, rulerEvent, false},
		{"wildcard: [ is no metacharacter", `{"detail":{"state":[{"wildcard":"[r]unning"}]}}`, rulerEvent, false},
		{"wildcard: an escaped star is a star", `{"Weather":[{"wildcard":"Sun\\*"}]}`, files, false},
		{"wildcard: a star escaped, then a wildcard", `{"Glob":[{"wildcard":"a\\**"}]}`, files, true},
		{"wildcard must match it all", `{"Weather":[{"wildcard":"Sun*y*z"}]}`, files, false},
		{"$or", `{"source":["aws.ec2"],"$or":[{"detail":{"state":["stopped"]}},{"detail":{"c-count":[5]}}]}`, rulerEvent, true},
		{"$or none matches", `{"$or":[{"detail":{"state":["stopped"]}},{"region":["eu-west-1"]}]}`, rulerEvent, false},
		{"nested $or", `{"detail":{"$or":[{"state":["stopped"]},{"d-count":[{"numeric":["<",4]}]}]}}`, rulerEvent, true},
		{"objects in an array", `{"employees":{"firstName":["Anna"]}}`, employees, true},
		{"fields of two array elements do not match together", `{"employees":{"firstName":["Anna"],"lastName":["Jones"]}}`, employees, false},
		{"an object for a list of values", `{"detail":["i-0abc"]}`, rulerEvent, false},
	} {
		p, err := parseEventPattern(tc.pattern)
		if err != nil {
			t.Errorf("%s: %s: %v", tc.name, tc.pattern, err)
			continue
		}
		if got := p.matches(decode(t, tc.event)); got != tc.want {
			t.Errorf("%s: %s matches = %v, want %v", tc.name, tc.pattern, got, tc.want)
		}
	}
}

// TestPutRuleRefusesWhatEventBridgeRefuses: patterns the documents call
// invalid, including the operators EventBridge does not have.
func TestPutRuleRefusesWhatEventBridgeRefuses(t *testing.T) {
	for _, bad := range []string{
		`not json`, `["source"]`, `{}`, `{"detail":{}}`,
		`{"source":"aws.ec2"}`, `{"source":[]}`, `{"source":[["aws.ec2"]]}`,
		`{"source":[{"prefx":"aws."}]}`, `{"source":[{"regex":"aws.*"}]}`, `{"source":[{"prefix":"aws.","suffix":"2"}]}`, `{"source":[{}]}`,
		`{"source":[{"prefix":5}]}`, `{"source":[{"prefix":{"equals-ignore-case":1}}]}`, `{"source":[{"equals-ignore-case":["a"]}]}`,
		`{"source":[{"wildcard":"aws.**"}]}`, `{"source":[{"wildcard":"aws\\.ec2"}]}`, `{"source":[{"wildcard":"aws\\"}]}`, `{"source":[{"wildcard":5}]}`,
		`{"detail":{"state":[{"exists":"true"}]}}`,
		`{"detail":{"c":[{"numeric":[">","0"]}]}}`, `{"detail":{"c":[{"numeric":["<",5,">",0]}]}}`, `{"detail":{"c":[{"numeric":["~",5]}]}}`,
		`{"detail":{"c":[{"numeric":[">",5,"<",1]}]}}`, `{"detail":{"c":[{"numeric":[">",5]}],"d":[{"numeric":[]}]}}`,
		`{"detail":{"c":[{"anything-but":[1,"a"]}]}}`, `{"detail":{"c":[{"anything-but":[]}]}}`, `{"detail":{"c":[{"anything-but":true}]}}`,
		`{"detail":{"c":[{"anything-but":{"prefix":["a","b"]}}]}}`, `{"detail":{"c":[{"anything-but":{"numeric":[">",1]}}]}}`,
		`{"detail":{"ip":[{"cidr":"10.0.0.0/33"}]}}`, `{"detail":{"ip":[{"cidr":"ten"}]}}`,
		`{"$or":[{"source":["a"]}]}`, `{"$or":{"source":["a"]}}`, `{"$or":[{"source":["a"]},"b"]}`, `{"$or":[{"prefix":["a"]},{"source":["b"]}]}`,
	} {
		if _, err := parseEventPattern(bad); err == nil {
			t.Errorf("%s: accepted, want an error", bad)
		}
	}
}

// TestRulePatternsMatchTheRealSamples: the rules an interruption handler
// sets up (by source and detail type) match AWS's own events, the samples in
// lambda/testdata (provenance in its README), and not one another's.
func TestRulePatternsMatchTheRealSamples(t *testing.T) {
	samples := map[string]string{
		"spot-interruption-terminate.json":        `{"source":["aws.ec2"],"detail-type":["EC2 Spot Instance Interruption Warning"]}`,
		"rebalance-recommendation.json":           `{"source":["aws.ec2"],"detail-type":["EC2 Instance Rebalance Recommendation"]}`,
		"state-change-stopping.json":              `{"source":["aws.ec2"],"detail-type":["EC2 Instance State-change Notification"],"detail":{"state":["stopping","stopped","shutting-down","terminated"]}}`,
		"health-scheduled-change-retirement.json": `{"source":["aws.health"],"detail-type":["AWS Health Event"],"detail":{"service":["EC2"],"eventTypeCategory":["scheduledChange"]}}`,
		"capacity-reservation-interruption.json":  `{"source":["aws.ec2"],"detail-type":["EC2 Capacity Reservation Instance Interruption Warning"]}`,
		"capacity-block-expiration-warning.json":  `{"source":["aws.ec2"],"detail-type":["Capacity Block Reservation Expiration Warning","Capacity Block Expiration Warning"]}`,
		// The EventBridge User Guide's "Event patterns" example, on its own event.
		"state-change-terminated.json": `{"source":["aws.ec2"],"detail-type":["EC2 Instance State-change Notification"],"detail":{"state":["terminated"]}}`,
	}
	for file, pattern := range samples {
		p, err := parseEventPattern(pattern)
		if err != nil {
			t.Fatalf("%s: %v", pattern, err)
		}
		for other := range samples {
			if got, want := p.matches(ReadLambdaSample(t, other)), other == file || (file == "state-change-stopping.json" && other == "state-change-terminated.json"); got != want {
				t.Errorf("%s on %s: matches = %v, want %v", pattern, other, got, want)
			}
		}
	}
	running, err := parseEventPattern(`{"detail":{"state":[{"anything-but":["pending","running"]}]}}`)
	if err != nil || running.matches(ReadLambdaSample(t, "state-change-running.json")) || !running.matches(ReadLambdaSample(t, "state-change-stopped.json")) {
		t.Errorf("anything-but pending and running: %v", err)
	}
}

func decode(t *testing.T, doc string) map[string]any {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal([]byte(doc), &ev); err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	return ev
}

// ReadLambdaSample reads one of the real EventBridge events in
// lambda/testdata (their provenance is in its README), for this package's
// tests inside and out.
func ReadLambdaSample(t testing.TB, name string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "lambda", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return ev
}
