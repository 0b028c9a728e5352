package awsemu

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stowage-dev/stowage/internal/iamcheck/reference"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// TestTheIAMTablesAreTheInstalledData regenerates the emulator's tables from
// the packages make tools installed, for the actions and the documented
// managed policies they hold, and compares them byte for byte: a table that
// is not AWS's published data (edited by hand, or from another release) fails.
func TestTheIAMTablesAreTheInstalledData(t *testing.T) {
	modules, err := testenv.IAMCheckModules()
	if err != nil {
		t.Fatal(err)
	}
	actions := map[string][]string{}
	for a := range iamReference {
		svc, name, _ := strings.Cut(a, ":")
		actions[svc] = append(actions[svc], name)
	}
	table, err := reference.Table(modules, actions)
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for arn := range awsManagedPolicyDocs {
		documented = append(documented, arn[strings.LastIndex(arn, "/")+1:])
	}
	managed, err := reference.ManagedPolicies(modules, documented)
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string][]byte{"zz_generated.iamreference.go": table, "zz_generated.managedpolicies.go": managed} {
		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what the installed packages give: run `go run ./hack/iamref` from the repository's root", file)
		}
	}
}

// TestEveryManagedPolicyStowageAttachesIsDocumented reads the managed
// policy ARNs the modules and the provider attach: each must be AWS's and
// have its document in the table, so that the emulator evaluates it.
func TestEveryManagedPolicyStowageAttachesIsDocumented(t *testing.T) {
	arn := regexp.MustCompile(`arn:aws:iam::aws:policy/[\w+=,.@/-]+[\w]`)
	seen := 0
	for _, root := range []string{"../../modules", "../../provider/internal/provider", "../../internal/testbed", "../../internal/tfbed"} {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".tf") || strings.HasSuffix(path, ".go")) {
				return err
			}
			b, err := os.ReadFile(path)
			for _, m := range arn.FindAllString(string(b), -1) {
				seen++
				if awsManagedPolicyDocs[m] == "" {
					t.Errorf("%s attaches %s, whose document the emulator does not have: add it to hack/iamref's documentedPolicies", path, m)
				}
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if seen == 0 {
		t.Fatal("found no managed policy ARN in the modules or the provider")
	}
	if awsManagedPolicies()["arn:aws:iam::aws:policy/AmazonEKSWorkerNodeMinimalPolicy"] == nil ||
		awsManagedPolicies()["arn:aws:iam::aws:policy/NoSuchPolicyAtAWS"] != nil {
		t.Error("the managed policies are not AWS's list")
	}
}
