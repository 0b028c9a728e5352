package imagetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stowage-dev/stowage/internal/testenv"
)

// TestReleaseSignSignsTheProvidersChecksums runs make release-sign's script
// with a key made for the test in a keyring of its own: gpgv, given only the
// public key, verifies the detached signature, which is binary (not
// armored), as the Terraform Registry takes it; a missing key is refused.
func TestReleaseSignSignsTheProvidersChecksums(t *testing.T) {
	bin := testenv.RequireAssets(t, testenv.GPG, testenv.GPGV, testenv.GPGConf)
	home, dist := t.TempDir(), t.TempDir()
	env := append(os.Environ(), "GNUPGHOME="+home, "DIST="+dist, "PATH="+bin+":"+os.Getenv("PATH"))
	run := func(name string, args ...string) []byte {
		t.Helper()
		if name != "bash" {
			name = filepath.Join(bin, name)
		}
		cmd := exec.Command(name, args...)
		cmd.Env, cmd.Dir = env, filepath.Join("..", "..")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return out
	}
	t.Cleanup(func() {
		kill := exec.Command(filepath.Join(bin, testenv.GPGConf), "--kill", "gpg-agent")
		kill.Env = env
		_ = kill.Run()
	})
	run(testenv.GPG, "--batch", "--passphrase", "", "--quick-gen-key", "Stowage release test <release@stowage.invalid>", "rsa2048", "sign", "never")
	sums := filepath.Join(dist, "terraform-provider-stowage_0.1.0_SHA256SUMS")
	if err := os.WriteFile(sums, []byte("0123  terraform-provider-stowage_0.1.0_linux_amd64.zip\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	refused := exec.Command("bash", "hack/release.sh", "sign", "v0.1.0", "")
	refused.Env, refused.Dir = env, filepath.Join("..", "..")
	if out, err := refused.CombinedOutput(); err == nil {
		t.Errorf("release.sh sign without a key succeeded:\n%s", out)
	}
	run("bash", "hack/release.sh", "sign", "v0.1.0", "release@stowage.invalid")
	keyring := filepath.Join(t.TempDir(), "public.gpg")
	run(testenv.GPG, "--batch", "--output", keyring, "--export", "release@stowage.invalid")
	run(testenv.GPGV, "--keyring", keyring, sums+".sig", sums)
	sig, err := os.ReadFile(sums + ".sig")
	if err != nil || len(sig) == 0 || sig[0] == '-' {
		t.Errorf("the signature is missing or armored (%v): the Registry takes a binary detached signature", err)
	}
}
