// Package bundle writes the interruption Lambda's deployment package: a zip
// holding one executable file, bootstrap, as the provided.al2023 runtime
// runs it. Every byte of the zip depends on the binary alone (fixed time,
// mode and compression), so the same commit gives the same zip. make release
// writes the Terraform provider's zips with it too (WriteEntry).
package bundle

import (
	"archive/zip"
	"fmt"
	"io"
	"time"
)

// Entry is the name the provided runtimes execute.
const Entry = "bootstrap"

// Modified is the time every zip records for bootstrap.
var Modified = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// Write writes the zip of bootstrap to w.
func Write(w io.Writer, bootstrap []byte) error { return WriteEntry(w, Entry, bootstrap) }

// WriteEntry writes a zip holding one executable file, name, to w.
func WriteEntry(w io.Writer, name string, executable []byte) error {
	zw := zip.NewWriter(w)
	hdr := &zip.FileHeader{Name: name, Method: zip.Deflate, Modified: Modified}
	hdr.SetMode(0o755)
	f, err := zw.CreateHeader(hdr)
	if err != nil {
		return fmt.Errorf("adding %s to the zip: %w", name, err)
	}
	if _, err := f.Write(executable); err != nil {
		return fmt.Errorf("writing %s into the zip: %w", name, err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("closing the zip: %w", err)
	}
	return nil
}
