package disruption_test

import (
	"os"
	"testing"

	"github.com/stowage-dev/stowage/controller/state/statetest"
)

// TestMain starts the shared control plane only if a test asks for it.
func TestMain(m *testing.M) { os.Exit(statetest.Run(m)) }
