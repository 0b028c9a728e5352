package awsemu

import (
	"encoding/json"
	"testing"
)

func TestEventPatternsMatchAsEventBridgeDocuments(t *testing.T) {
	event := `{"source":"aws.ec2","detail-type":"EC2 Instance State-change Notification","account":"123456789012",
		"resources":["arn:aws:ec2:us-east-1:123456789012:instance/i-0abc"],
		"detail":{"instance-id":"i-0abc","state":"stopping","count":5,"tags":["a","b"],"flag":null}}`
	var ev map[string]any
	if err := json.Unmarshal([]byte(event), &ev); err != nil {
		t.Fatal(err)
	}
	for pattern, want := range map[string]bool{
		`{"source":["aws.ec2"]}`:                                                true,
		`{"source":["aws.health","aws.ec2"]}`:                                   true,
		`{"source":["aws.health"]}`:                                             false,
		`{"source":["aws.ec2"],"detail-type":["Other"]}`:                        false,
		`{"detail":{"state":["stopping","stopped"]}}`:                           true,
		`{"detail":{"state":[{"prefix":"stop"}]}}`:                              true,
		`{"detail":{"state":[{"suffix":"ing"}]}}`:                               true,
		`{"detail":{"state":[{"anything-but":["running"]}]}}`:                   true,
		`{"detail":{"state":[{"anything-but":"stopping"}]}}`:                    false,
		`{"detail":{"state":[{"equals-ignore-case":"STOPPING"}]}}`:              true,
		`{"detail":{"missing":[{"exists":false}]}}`:                             true,
		`{"detail":{"state":[{"exists":false}]}}`:                               false,
		`{"detail":{"count":[{"numeric":[">",1,"<=",5]}]}}`:                     true,
		`{"detail":{"count":[{"numeric":[">",5]}]}}`:                            false,
		`{"detail":{"count":[5]}}`:                                              true,
		`{"detail":{"tags":["b"]}}`:                                             true,
		`{"detail":{"flag":[null]}}`:                                            true,
		`{"detail":{"instance-id":[{"wildcard":"i-*"}]}}`:                       true,
		`{"resources":[{"prefix":"arn:aws:ec2:us-east-1"}]}`:                    true,
		`{"detail":["i-0abc"]}`:                                                 false,
		`{"$or":[{"source":["aws.health"]},{"detail":{"state":["stopping"]}}]}`: true,
		`{"$or":[{"source":["aws.health"]},{"detail":{"state":["running"]}}]}`:  false,
	} {
		p, err := parseEventPattern(pattern)
		if err != nil {
			t.Errorf("%s: %v", pattern, err)
			continue
		}
		if got := p.matches(ev); got != want {
			t.Errorf("%s matches = %v, want %v", pattern, got, want)
		}
	}
	for _, bad := range []string{`not json`, `{"source":"aws.ec2"}`, `{"source":[]}`, `{"$or":[{"source":["a"]}]}`} {
		if _, err := parseEventPattern(bad); err == nil {
			t.Errorf("%s: accepted, want an error", bad)
		}
	}
}
