// Command chartgen writes charts/stowage from controller/deploy's manifests
// and the CRDs (internal/chartgen), or with -check fails when the chart is
// not what it writes.
//
//	go run ./hack/chartgen [-check]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/stowage-dev/stowage/internal/chartgen"
)

func main() {
	check := flag.Bool("check", false, "fail when charts/stowage is not what this command writes")
	flag.Parse()
	if err := run(*check); err != nil {
		fmt.Fprintf(os.Stderr, "chartgen: %v\n", err)
		os.Exit(1)
	}
}

func run(check bool) error {
	files, err := chartgen.Files()
	if err != nil {
		return err
	}
	var stale []string
	for name, data := range files {
		path := filepath.Join(chartgen.Dir, name)
		old, err := os.ReadFile(path)
		if err == nil && bytes.Equal(old, data) {
			continue
		}
		stale = append(stale, path)
		if !check {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(path, data, 0o644); err != nil { //nolint:gosec // the chart is public
				return err
			}
		}
	}
	extra, err := extraFiles(files)
	if err != nil {
		return err
	}
	if check && len(stale)+len(extra) > 0 {
		slices.Sort(stale)
		return fmt.Errorf("stale %v, not generated %v: run make generate and commit", stale, extra)
	}
	for _, path := range extra {
		if err := os.Remove(path); err != nil {
			return err
		}
	}
	return nil
}

// extraFiles are the files of the chart's folder chartgen does not write.
func extraFiles(files map[string][]byte) ([]string, error) {
	var extra []string
	err := filepath.WalkDir(chartgen.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(chartgen.Dir, path)
		if _, ok := files[filepath.ToSlash(rel)]; !ok && err == nil {
			extra = append(extra, path)
		}
		return err
	})
	if os.IsNotExist(err) {
		return nil, nil
	}
	return extra, err
}
