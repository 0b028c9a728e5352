package provider

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stowage-dev/stowage/lambda/messages"
	"github.com/stowage-dev/stowage/lambda/messages/registry"
)

// kindRow reads a row of docs/guides/interruption.md's table of kinds:
// the kind, the source and the detail-type, and any narrowing after them.
var kindRow = regexp.MustCompile("^\\| `([a-z-]+)` \\| `([a-z0-9.]+)`, `([^`]+)`(.*?) \\|")

// TestRulesFeedEveryKindTheLambdaReads keeps the queue's rules in step with
// the Lambda's parser registry (every (source, detail-type) it reads has a
// rule, and no rule sends what it cannot read) and with the kinds the guide
// documents.
func TestRulesFeedEveryKindTheLambdaReads(t *testing.T) {
	var ruled []messages.Key
	for _, r := range interruptionRules {
		for _, d := range r.DetailTypes {
			ruled = append(ruled, messages.Key{Source: r.Source, DetailType: d})
		}
		var p map[string]any
		if err := json.Unmarshal([]byte(r.pattern()), &p); err != nil {
			t.Errorf("rule %s: pattern %s: %v", r.Name, r.pattern(), err)
		}
		if len(ruleName(strings.Repeat("p", maxRulePrefix()), r)) > 64 {
			t.Errorf("rule %s does not fit 64 characters with the longest prefix", r.Name)
		}
	}
	read := registry.New().Keys()
	for _, k := range read {
		if !slices.Contains(ruled, k) {
			t.Errorf("the Lambda reads %s %q, which no rule sends to the queue", k.Source, k.DetailType)
		}
	}
	for _, k := range ruled {
		if !slices.Contains(read, k) {
			t.Errorf("a rule sends %s %q, which the Lambda does not read", k.Source, k.DetailType)
		}
	}
	guide, err := os.ReadFile("../../../docs/guides/interruption.md")
	if err != nil {
		t.Fatal(err)
	}
	kinds := 0
	for _, line := range strings.Split(string(guide), "\n") {
		m := kindRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		kinds++
		r := ruleFor(m[2], m[3])
		if r == nil {
			t.Errorf("kind %s (%s %q) has no rule", m[1], m[2], m[3])
			continue
		}
		// A narrowing the guide names (a state, a category) is one the rule's pattern holds.
		for _, want := range regexp.MustCompile("`([A-Za-z-]+)`").FindAllStringSubmatch(m[4], -1) {
			if !strings.Contains(r.pattern(), `"`+want[1]+`"`) {
				t.Errorf("kind %s: the guide narrows it to %s, the rule's pattern %s does not", m[1], want[1], r.pattern())
			}
		}
	}
	if kinds < 6 {
		t.Errorf("read %d kinds from the guide's table, want its six", kinds)
	}
}

func ruleFor(source, detailType string) *interruptionRule {
	for i, r := range interruptionRules {
		if r.Source == source && slices.Contains(r.DetailTypes, detailType) {
			return &interruptionRules[i]
		}
	}
	return nil
}
