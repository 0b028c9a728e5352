// Package logging builds Stowage's hclog loggers and bridges them to logr, the
// interface controller-runtime and client-go log through, so that every line
// leaves the process in one format with the same keys.
package logging

import (
	"io"

	"github.com/go-logr/logr"
	"github.com/hashicorp/go-hclog"
)

// Keys every component logs with (STYLE.md §8.6).
const (
	KeyNode         = "node"
	KeyNodeClaim    = "nodeclaim"
	KeyNodePool     = "nodepool"
	KeyInstanceID   = "instance_id"
	KeyInstanceType = "instance_type"
	KeyZone         = "zone"
	KeyCapacityType = "capacity_type"
	KeyReason       = "reason"
)

// New returns the root logger: JSON unless format is "text".
func New(name, level, format string, out io.Writer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:       name,
		Level:      hclog.LevelFromString(level),
		Output:     out,
		JSONFormat: format != "text",
	})
}

// Logr adapts an hclog logger to logr. logr's V-levels map onto hclog's:
// V(0) is info, V(1) debug, V(2) and above trace.
func Logr(l hclog.Logger) logr.Logger {
	return logr.New(&sink{l: l})
}

type sink struct {
	l hclog.Logger
}

func (s *sink) Init(logr.RuntimeInfo) {}

func level(v int) hclog.Level {
	switch {
	case v <= 0:
		return hclog.Info
	case v == 1:
		return hclog.Debug
	default:
		return hclog.Trace
	}
}

func (s *sink) Enabled(v int) bool { return s.l.GetLevel() <= level(v) }

func (s *sink) Info(v int, msg string, kv ...any) { s.l.Log(level(v), msg, kv...) }

func (s *sink) Error(err error, msg string, kv ...any) {
	s.l.Error(msg, append([]any{"error", err}, kv...)...)
}

func (s *sink) WithValues(kv ...any) logr.LogSink { return &sink{l: s.l.With(kv...)} }

func (s *sink) WithName(name string) logr.LogSink { return &sink{l: s.l.Named(name)} }
