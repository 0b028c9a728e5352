package operator_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/version"

	"github.com/stowage-dev/stowage/controller/operator"
)

func TestMinorVersion(t *testing.T) {
	for _, tc := range []struct {
		major, minor, want string
		wantErr            bool
	}{
		{"1", "37", "1.37", false},
		{"1", "30+", "1.30", false}, // EKS
		{"1", "", "", true},
		{"v1", "37", "", true},
	} {
		got, err := operator.MinorVersion(&version.Info{Major: tc.major, Minor: tc.minor})
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("MinorVersion(%q, %q) = %q, %v; want %q, error %v", tc.major, tc.minor, got, err, tc.want, tc.wantErr)
		}
	}
}
