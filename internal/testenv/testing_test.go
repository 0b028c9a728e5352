package testenv_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stowage-dev/stowage/internal/testenv"
)

// verdict records how a test helper ended a test: Fatal or Skip, with the
// message. Both stop the calling goroutine, as the testing package's do.
type verdict struct {
	testing.TB
	how, msg string
}

func (v *verdict) Helper() {}

func (v *verdict) Fatal(args ...any) { v.stop("fatal", fmt.Sprint(args...)) }

func (v *verdict) Fatalf(format string, args ...any) { v.stop("fatal", fmt.Sprintf(format, args...)) }

func (v *verdict) Skip(args ...any) { v.stop("skip", fmt.Sprint(args...)) }

func (v *verdict) Skipf(format string, args ...any) { v.stop("skip", fmt.Sprintf(format, args...)) }

func (v *verdict) SkipNow() { v.stop("skip", "") }

func (v *verdict) stop(how, msg string) {
	v.how, v.msg = how, msg
	runtime.Goexit()
}

// TestRequireAssetsFailsNamingMakeTools checks that a missing component fails
// the test, wherever it runs (CI set or not), naming the binary and the make
// target that builds it.
func TestRequireAssetsFailsNamingMakeTools(t *testing.T) {
	for _, ci := range []string{"", "true"} {
		t.Run("CI="+ci, func(t *testing.T) {
			t.Setenv("STOWAGE_CACHE", t.TempDir())
			t.Setenv("CI", ci)
			v := &verdict{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				testenv.RequireAssets(v, testenv.Etcd, testenv.KubeAPIServer)
			}()
			<-done
			if v.how != "fatal" {
				t.Fatalf("RequireAssets with no binaries ended with %q, want a failure", v.how)
			}
			if !strings.Contains(v.msg, "etcd not found in") || !strings.Contains(v.msg, "run `make tools`") {
				t.Errorf("RequireAssets failed with %q, want it to name etcd and `make tools`", v.msg)
			}
		})
	}
}
