package tfbed

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stowage-dev/stowage/internal/iamcheck"
)

// shared is a test package's one Env, started by the first test that needs
// it and stopped by Main.
var shared struct {
	once sync.Once
	opts Options
	dir  string
	env  *Env
	err  error
}

// Main runs a test package's tests (call it from TestMain) with one Env
// shared by those that call Shared, and stops it after them.
func Main(m *testing.M, o Options) int {
	shared.opts = o
	return iamcheck.Run(func() int { return run(m) })
}

func run(m *testing.M) int {
	code := m.Run()
	if shared.env != nil {
		if err := shared.env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the bed: %v\n", err)
			code = max(code, 1)
		}
	}
	if shared.dir != "" {
		_ = os.RemoveAll(shared.dir)
	}
	return code
}

// Shared returns the package's Env, starting it on first use; a component
// that is missing fails t, naming `make tools`.
func Shared(t testing.TB) *Env {
	t.Helper()
	shared.once.Do(func() {
		if shared.dir, shared.err = os.MkdirTemp("", "stowage-tfbed-"); shared.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		shared.env, shared.err = Start(ctx, shared.dir, shared.opts)
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.env
}
