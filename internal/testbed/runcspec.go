package testbed

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// runcSpec turns the config `runc spec` writes (runc's own defaults:
// namespaces, /proc, /dev, masked and read-only paths) into the pod's
// container.
type runcSpec struct {
	pod       corev1.PodSpec
	container corev1.Container
	image     imageConfig
	args      []string          // the container's args, with the bed's port overrides
	env       []string          // the kubelet's and the container's, after the image's
	mounts    map[string]string // in the container -> on the host, read-only
	hostname  string
}

func (s runcSpec) writeInto(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var spec map[string]any
	if err := json.Unmarshal(raw, &spec); err != nil {
		return fmt.Errorf("reading runc's default spec: %w", err)
	}
	process, ok1 := spec["process"].(map[string]any)
	linux, ok2 := spec["linux"].(map[string]any)
	if !ok1 || !ok2 {
		return fmt.Errorf("runc's default spec has no process or linux section")
	}
	if err := s.editProcess(process); err != nil {
		return err
	}
	sc := s.container.SecurityContext
	spec["root"] = map[string]any{"path": "rootfs", "readonly": sc != nil && sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem}
	spec["hostname"] = s.hostname
	s.editLinux(linux)
	mounts, _ := spec["mounts"].([]any)
	for _, dst := range sortedKeys(s.mounts) {
		mounts = append(mounts, map[string]any{"destination": dst, "type": "bind", "source": s.mounts[dst],
			"options": []string{"rbind", "ro", "nosuid", "nodev", "noexec"}})
	}
	spec["mounts"] = mounts
	out, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o600)
}

// editProcess sets what runs and as whom: the image's entrypoint with the
// container's args (its command would replace the entrypoint), the user,
// the capabilities and no privilege escalation.
func (s runcSpec) editProcess(process map[string]any) error {
	uid, gid, err := userOf(s.pod, s.container, s.image)
	if err != nil {
		return err
	}
	entry, args := s.image.Config.Entrypoint, s.image.Config.Cmd
	if len(s.container.Command) > 0 {
		entry, args = s.container.Command, nil
	}
	if len(s.args) > 0 {
		args = s.args
	}
	process["terminal"] = false
	process["args"] = append(slices.Clone(entry), args...)
	process["env"] = mergeEnv(s.image.Config.Env, s.env)
	process["cwd"] = cmpOr(s.container.WorkingDir, s.image.Config.WorkingDir, "/")
	user := map[string]any{"uid": uid, "gid": gid}
	if psc := s.pod.SecurityContext; psc != nil && psc.FSGroup != nil {
		user["additionalGids"] = []int64{*psc.FSGroup}
	}
	process["user"] = user
	sc := s.container.SecurityContext
	if sc != nil && sc.Capabilities != nil && slices.Contains(sc.Capabilities.Drop, "ALL") && len(sc.Capabilities.Add) == 0 {
		process["capabilities"] = map[string]any{"bounding": []string{}, "effective": []string{}, "inheritable": []string{},
			"permitted": []string{}, "ambient": []string{}}
	}
	process["noNewPrivileges"] = sc == nil || sc.AllowPrivilegeEscalation == nil || !*sc.AllowPrivilegeEscalation
	return nil
}

// editLinux leaves the network namespace out (the host's, as hostNetwork)
// and applies the container's memory limit.
func (s runcSpec) editLinux(linux map[string]any) {
	var namespaces []any
	for _, ns := range linux["namespaces"].([]any) {
		if m, ok := ns.(map[string]any); !ok || m["type"] != "network" {
			namespaces = append(namespaces, ns)
		}
	}
	linux["namespaces"] = namespaces
	if limit, ok := s.container.Resources.Limits[corev1.ResourceMemory]; ok {
		res, _ := linux["resources"].(map[string]any)
		if res == nil {
			res = map[string]any{}
		}
		res["memory"] = map[string]any{"limit": limit.Value()}
		linux["resources"] = res
	}
}

// mergeEnv is base then over, a later name replacing an earlier one in
// place (a process reads the first of two values).
func mergeEnv(base, over []string) []string {
	var out []string
	at := map[string]int{}
	for _, kv := range append(slices.Clone(base), over...) {
		name, _, _ := strings.Cut(kv, "=")
		if i, ok := at[name]; ok {
			out[i] = kv
			continue
		}
		at[name] = len(out)
		out = append(out, kv)
	}
	return out
}

func cmpOr(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// untar unpacks a flattened image filesystem into root, with its owners
// and modes; an entry leaving root is an error.
func untar(r io.Reader, root string) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		target := filepath.Join(root, filepath.Clean("/"+hdr.Name))
		if !strings.HasPrefix(target, filepath.Clean(root)+string(filepath.Separator)) {
			return fmt.Errorf("layer entry %q leaves the root filesystem", hdr.Name)
		}
		if err := unpackEntry(tr, hdr, target); err != nil {
			return fmt.Errorf("unpacking %s: %w", hdr.Name, err)
		}
	}
}

func unpackEntry(tr *tar.Reader, hdr *tar.Header, target string) error {
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	mode := hdr.FileInfo().Mode()
	switch hdr.Typeflag {
	case tar.TypeDir:
		if err := os.MkdirAll(target, 0o755); err != nil {
			return err
		}
	case tar.TypeReg:
		f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, tr) //nolint:gosec // an image the test built
		if err := errors.Join(err, f.Close()); err != nil {
			return err
		}
	case tar.TypeSymlink:
		return os.Symlink(hdr.Linkname, target)
	default:
		return fmt.Errorf("entry type %c is not unpacked by the bed", hdr.Typeflag)
	}
	if err := os.Lchown(target, hdr.Uid, hdr.Gid); err != nil {
		return err
	}
	return os.Chmod(target, mode.Perm()|mode&(os.ModeSticky|os.ModeSetuid|os.ModeSetgid))
}
