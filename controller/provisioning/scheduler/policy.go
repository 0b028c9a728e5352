package scheduler

import (
	"fmt"
	"strings"
)

// PreferencePolicy says how a solve treats soft constraints: preferred node
// affinity, preferred pod (anti-)affinity and ScheduleAnyway topology spreads.
// docs/guides/schedule.md compares the three on the public workloads.
type PreferencePolicy string

const (
	// PreferencesRespect is Karpenter's semantics and relaxation order: every
	// soft constraint holds as if required, and a pod that fits nowhere sheds
	// them one at a time (see ladder.go), whatever capacity they cost.
	PreferencesRespect PreferencePolicy = "respect"
	// PreferencesIgnore drops soft constraints: the cheapest decision the
	// hard constraints allow.
	PreferencesIgnore PreferencePolicy = "ignore"
	// PreferencesCostAware lets soft constraints shape where pods go within
	// the capacity the hard constraints need anyway, and add capacity only
	// within PreferenceCostTolerance (see costaware.go).
	PreferencesCostAware PreferencePolicy = "cost-aware"
)

// DefaultPreferencePolicy is the policy of an empty Options.Preferences.
// Cost-aware: soft constraints are honoured where they cost (almost)
// nothing, and a fleet never grows more than PreferenceCostTolerance for
// them; respect, Karpenter's default, is one flag away for a cluster that
// must behave exactly as it did under Karpenter.
const DefaultPreferencePolicy = PreferencesCostAware

// PreferenceCostTolerance is how much more than the decision that ignores
// preferences a cost-aware decision may cost (10 %), and how much more per
// pod a placement that honours a preference may cost than the pod's cheapest.
const PreferenceCostTolerance = 0.10

// PreferencePolicies lists the valid policies, in the order messages name them.
var PreferencePolicies = []PreferencePolicy{PreferencesRespect, PreferencesIgnore, PreferencesCostAware}

// ParsePreferencePolicy reads a policy name, case-insensitively (Karpenter's
// "Respect" and "Ignore" are accepted); an error lists the valid values.
func ParsePreferencePolicy(s string) (PreferencePolicy, error) {
	for _, p := range PreferencePolicies {
		if strings.EqualFold(strings.TrimSpace(s), string(p)) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q is not a preference policy: use %s", s, policyList())
}

func policyList() string {
	names := make([]string, len(PreferencePolicies))
	for i, p := range PreferencePolicies {
		names[i] = string(p)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// String is the policy's name.
func (p PreferencePolicy) String() string { return string(p) }

// Set parses a flag value, so that a PreferencePolicy is a flag.Value.
func (p *PreferencePolicy) Set(s string) error {
	v, err := ParsePreferencePolicy(s)
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// orDefault is the policy, or DefaultPreferencePolicy when it is empty.
func (p PreferencePolicy) orDefault() PreferencePolicy {
	if p == "" {
		return DefaultPreferencePolicy
	}
	return p
}
