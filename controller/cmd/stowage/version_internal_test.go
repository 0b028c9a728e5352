package main

import (
	"bytes"
	"runtime"
	"testing"
)

func TestVersionOfAnUnstampedBuildSaysUnknown(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run([]string{"version"}, &out, &errs); code != 0 {
		t.Fatalf("stowage version exited %d: %s", code, errs.String())
	}
	want := "version: unknown\ncommit: unknown\ngo: " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	if out.String() != want {
		t.Fatalf("stowage version printed\n%s\nwant\n%s", out.String(), want)
	}
	if code := run([]string{"version", "extra"}, &out, &errs); code != 2 {
		t.Fatalf("stowage version extra exited %d, want 2", code)
	}
}
