package buildinfo_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/stowage-dev/stowage/controller/buildinfo"
)

func TestAnUnstampedBuildSaysUnknownAndExportsItsInfo(t *testing.T) {
	if buildinfo.Version() != buildinfo.Unknown || buildinfo.Commit() != buildinfo.Unknown {
		t.Fatalf("an unstamped test binary reports version %q, commit %q", buildinfo.Version(), buildinfo.Commit())
	}
	if got := testutil.ToFloat64(buildinfo.Info.WithLabelValues(buildinfo.Unknown, buildinfo.Unknown)); got != 1 {
		t.Fatalf("stowage_build_info{version=unknown,commit=unknown} is %v, want 1", got)
	}
	if n := testutil.CollectAndCount(buildinfo.Info); n != 1 {
		t.Fatalf("stowage_build_info has %d series, want 1", n)
	}
}
