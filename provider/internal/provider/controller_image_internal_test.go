package provider

import (
	"strings"
	"testing"
)

func TestTheDefaultImageIsTheReleasesIndexPinnedByDigest(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	for _, c := range []struct{ version, digest, want string }{
		{"1.2.3", digest, ControllerImage + ":v1.2.3@" + digest},
		{"1.2.3-rc.1", digest, ControllerImage + ":v1.2.3-rc.1@" + digest},
		{"1.2.3", "", ControllerImage + ":v1.2.3"},           // a release build without make release's stamp
		{"1.2.3", "sha256:abc", ControllerImage + ":v1.2.3"}, // not a digest
		{"dev", digest, ""},
		{"test", "", ""},
	} {
		if got := defaultImage(c.version, c.digest); got != c.want {
			t.Errorf("defaultImage(%q, %q) = %q, want %q", c.version, c.digest, got, c.want)
		}
	}
	if img := manifestImage(); img != ControllerImage+":dev" {
		t.Errorf("a development build deploys %q, want %s:dev (never a moving tag like latest)", img, ControllerImage)
	}
}
