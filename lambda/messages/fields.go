package messages

import (
	"regexp"
	"strings"
	"time"
)

// instanceIDPattern is an EC2 instance id: i- and 8 or 17 hex digits.
var instanceIDPattern = regexp.MustCompile(`^i-([0-9a-f]{8}|[0-9a-f]{17})$`)

// InstanceID checks that value, read from field, is an EC2 instance id.
func InstanceID(field, value string) (string, error) {
	if value == "" {
		return "", Fieldf(field, "missing; the event names its instance there")
	}
	if !instanceIDPattern.MatchString(value) {
		return "", Fieldf(field, "%q is not an EC2 instance id (i- and 8 or 17 hex digits)", Cut(value))
	}
	return value, nil
}

// EventTime reads the envelope's time, RFC 3339.
func EventTime(env Envelope) (time.Time, error) {
	return RFC3339("time", env.Time)
}

// RFC3339 reads value, from field, as an RFC 3339 time.
func RFC3339(field, value string) (time.Time, error) {
	if value == "" {
		return time.Time{}, Fieldf(field, "missing; an RFC 3339 time such as 2026-11-01T02:00:00Z was expected")
	}
	t, err := time.Parse(time.RFC3339, value)
	if err != nil {
		return time.Time{}, Fieldf(field, "%q is not an RFC 3339 time such as 2026-11-01T02:00:00Z", Cut(value))
	}
	return t.UTC(), nil
}

// OneOf checks that value, from field, is one of allowed.
func OneOf(field, value string, allowed ...string) error {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	if value == "" {
		return Fieldf(field, "missing; one of %s was expected", strings.Join(allowed, ", "))
	}
	return Fieldf(field, "%q is not one of %s", Cut(value), strings.Join(allowed, ", "))
}

// Cut shortens a quoted value, so that an error never carries a whole body.
func Cut(s string) string {
	const limit = 64
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "..."
}
