package logging_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stowage-dev/stowage/controller/logging"
)

func TestLogrBridgeWritesJSONWithKeys(t *testing.T) {
	var out bytes.Buffer
	log := logging.Logr(logging.New("stowage", "info", "json", &out)).WithName("provisioner").WithValues(logging.KeyNodePool, "web")
	log.Info("launched", logging.KeyNodeClaim, "web-abcde")
	log.V(1).Info("hidden at info level")
	log.Error(errors.New("boom"), "launch failed", logging.KeyReason, "InsufficientInstanceCapacity")

	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2 (the V(1) line must be dropped at info):\n%s", len(lines), out.String())
	}
	var first, second map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatalf("line 1 is not JSON: %v", err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &second); err != nil {
		t.Fatalf("line 2 is not JSON: %v", err)
	}
	if first["@message"] != "launched" || first["nodepool"] != "web" || first["nodeclaim"] != "web-abcde" || first["@module"] != "stowage.provisioner" {
		t.Errorf("first line = %v", first)
	}
	if second["@level"] != "error" || second["error"] != "boom" || second["reason"] != "InsufficientInstanceCapacity" {
		t.Errorf("second line = %v", second)
	}
}

func TestLogrVerbosityFollowsLevel(t *testing.T) {
	var out bytes.Buffer
	log := logging.Logr(logging.New("stowage", "debug", "text", &out))
	if !log.V(1).Enabled() || log.V(2).Enabled() {
		t.Errorf("at debug: V(1) enabled = %v (want true), V(2) enabled = %v (want false)", log.V(1).Enabled(), log.V(2).Enabled())
	}
}
