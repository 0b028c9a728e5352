package iamcheck_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/iamcheck"
)

// TestTheReplayFindsADecisionIAMSimulateMakesOtherwise logs three decisions
// on one policy that allows m6i launches only: one right, one wrong (a c6i
// allowed), and the right one again; the replay replays two and reports
// the wrong one.
func TestTheReplayFindsADecisionIAMSimulateMakesOtherwise(t *testing.T) {
	dir := t.TempDir()
	log, err := iamcheck.NewLog(filepath.Join(dir, "decisions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	policy := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:RunInstances",
 "Resource":"arn:aws:ec2:us-east-1:123456789012:instance/*","Condition":{"StringEquals":{"ec2:InstanceType":"m6i.large"}}}]}`
	decision := func(instanceType, clock string) awsemu.Authorization {
		return awsemu.Authorization{Principal: "arn:aws:iam::123456789012:user/u", Account: "123456789012", Action: "ec2:RunInstances",
			Resource: "arn:aws:ec2:us-east-1:123456789012:instance/*", Decision: "Allowed", Identity: []string{policy},
			Context: map[string][]string{"ec2:instancetype": {instanceType}, "aws:currenttime": {clock}}}
	}
	log.Add(decision("m6i.large", "2026-11-01T00:00:00Z"))
	log.Add(decision("c6i.large", "2026-11-01T00:00:00Z"))
	log.Add(decision("m6i.large", "2026-11-01T00:00:01Z")) // the same but for the clock: replayed once
	total, distinct, err := log.Close()
	if err != nil || total != 3 || distinct != 2 {
		t.Fatalf("logged %d decisions, %d distinct (%v); want 3 and 2", total, distinct, err)
	}
	res, err := iamcheck.Replay(dir, filepath.Join(dir, "decisions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Replayed != 2 || len(res.Disagreements) != 1 || !strings.Contains(string(res.Disagreements[0]), "c6i.large") {
		t.Errorf("replayed %d, disagreements %s; want 2 replayed and the c6i's decision reported", res.Replayed, res.Disagreements)
	}
}
