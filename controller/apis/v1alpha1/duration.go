package v1alpha1

import (
	"encoding/json"
	"fmt"
	"time"
)

// Never is the NillableDuration value that disables a timer.
const Never = "Never"

// NillableDuration is a duration that may also be "Never". Fields of this type are
// pointers: nil means unset (and defaulted), a nil Duration means Never.
// +kubebuilder:validation:Type=string
// +kubebuilder:object:generate=false
// +kubebuilder:validation:MaxLength=64
// +kubebuilder:validation:XValidation:rule=`self == 'Never' || self.matches(r'^[+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$')`,message="must be a duration such as 30s, 10m or 720h, or Never"
type NillableDuration struct {
	// Duration is nil for Never.
	Duration *time.Duration `json:"-"`
}

// MustParseDuration builds a NillableDuration from a Go duration string or "Never"; it panics on bad input
// and is meant for defaults and tests.
func MustParseDuration(s string) NillableDuration {
	d, err := ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return d
}

// ParseDuration builds a NillableDuration from a Go duration string or "Never".
func ParseDuration(s string) (NillableDuration, error) {
	if s == Never {
		return NillableDuration{}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return NillableDuration{}, fmt.Errorf("parsing duration %q: want a duration such as 30s, 10m or 720h, or Never", s)
	}
	if d < 0 {
		return NillableDuration{}, fmt.Errorf("parsing duration %q: must not be negative", s)
	}
	return NillableDuration{Duration: &d}, nil
}

// String renders the duration as it is written in manifests.
func (d NillableDuration) String() string {
	if d.Duration == nil {
		return Never
	}
	return d.Duration.String()
}

// MarshalJSON writes the duration as a string.
func (d NillableDuration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a duration string or "Never".
func (d *NillableDuration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("reading duration: want a string such as \"720h\" or \"Never\"")
	}
	parsed, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*d = parsed
	return nil
}

// DeepCopyInto copies the duration into out.
func (d *NillableDuration) DeepCopyInto(out *NillableDuration) {
	*out = NillableDuration{}
	if d.Duration != nil {
		v := *d.Duration
		out.Duration = &v
	}
}

// DeepCopy returns a copy of the duration.
func (d *NillableDuration) DeepCopy() *NillableDuration {
	if d == nil {
		return nil
	}
	out := new(NillableDuration)
	d.DeepCopyInto(out)
	return out
}
