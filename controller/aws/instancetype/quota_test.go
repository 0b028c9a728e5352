package instancetype_test

import (
	"testing"

	"github.com/stowage-dev/stowage/controller/aws/instancetype"
)

func TestQuotaClass(t *testing.T) {
	for name, want := range map[string]string{
		"m6i.large": "standard", "c7gn.xlarge": "standard", "r7iz.large": "standard", "t3.micro": "standard", "im4gn.large": "standard",
		"g5.xlarge": "g", "gr6.4xlarge": "g", "vt1.3xlarge": "g", "p4d.24xlarge": "p", "inf2.xlarge": "inf", "trn1n.32xlarge": "trn",
		"dl1.24xlarge": "dl", "hpc7g.4xlarge": "hpc", "x2iedn.xlarge": "x", "f1.2xlarge": "f", "u-6tb1.metal": "high-memory",
		"mac2.metal": "mac",
	} {
		if got := instancetype.QuotaClass(name); got != want {
			t.Errorf("QuotaClass(%s) = %q, want %q", name, got, want)
		}
	}
}
