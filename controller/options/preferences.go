package options

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// PreferencesUsage is the help of --preferences, the same on `stowage run`,
// `stowage schedule` and `stowage simulate`.
const PreferencesUsage = "how preferred affinities and ScheduleAnyway spreads count: respect (Karpenter's semantics and relaxation order), " +
	"ignore, or cost-aware (honoured within the capacity the pods need anyway, and at most 10% more; the default); see docs/guides/schedule.md"

// PreferenceFlags registers --preferences on a command's flags, and with
// deprecated the old --ignore-preferences as an alias of
// --preferences=ignore that warns on stderr. The returned check, run after
// parsing, refuses the alias beside a --preferences that says otherwise.
func PreferenceFlags(fs *flag.FlagSet, p *scheduler.PreferencePolicy, deprecated bool, stderr io.Writer) func() error {
	if *p == "" {
		*p = scheduler.DefaultPreferencePolicy
	}
	fs.Var(p, "preferences", PreferencesUsage)
	if !deprecated {
		return func() error { return nil }
	}
	alias := &ignoreAlias{stderr: stderr}
	fs.Var(alias, "ignore-preferences", "deprecated: use --preferences=ignore")
	return func() error {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		switch {
		case !alias.on:
		case set["preferences"] && *p != scheduler.PreferencesIgnore:
			return fmt.Errorf("--ignore-preferences contradicts --preferences=%s: drop --ignore-preferences, which is deprecated", *p)
		default:
			*p = scheduler.PreferencesIgnore
		}
		return nil
	}
}

// ignoreAlias is the deprecated boolean --ignore-preferences.
type ignoreAlias struct {
	on     bool
	stderr io.Writer
}

func (a *ignoreAlias) String() string   { return strconv.FormatBool(a != nil && a.on) }
func (a *ignoreAlias) IsBoolFlag() bool { return true }
func (a *ignoreAlias) Set(s string) error {
	on, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("want true or false; better, use --preferences=ignore")
	}
	a.on = on
	if on {
		fmt.Fprintln(a.stderr, "warning: --ignore-preferences is deprecated: use --preferences=ignore")
	}
	return nil
}
