package testenv

import "testing"

// RequireAssets returns the folder of the named binaries (all of
// BedComponents when none is named), and fails t when one is missing, with a
// message that names the binary and `make tools`. It never skips: a test
// that cannot run its real components has not passed.
func RequireAssets(t testing.TB, names ...string) string {
	t.Helper()
	dir, err := Assets(names...)
	if err == nil && needsKwok(names) {
		_, err = KwokStages()
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func needsKwok(names []string) bool {
	if len(names) == 0 {
		return true
	}
	for _, n := range names {
		if n == Kwok {
			return true
		}
	}
	return false
}

// Start starts a control plane for t with o (see RequireAssets for missing
// binaries) and stops it when t ends, first logging every component's log
// tail if t failed.
func Start(t testing.TB, o Options) *ControlPlane {
	t.Helper()
	if o.BinDir == "" {
		o.BinDir = RequireAssets(t, o.components()...)
	}
	cp, err := StartControlPlane(t.Context(), o)
	if err != nil {
		t.Fatalf("starting the control plane: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("component logs:\n%s", cp.LogTails())
		}
		if err := cp.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	})
	return cp
}
