package awsemu_test

import (
	"bufio"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stowage-dev/stowage/internal/testenv"
)

// startFauxqs runs fauxqs (installed by make tools) on a free 127.0.0.1 port
// through fauxqs/server.mjs and returns its URL; it stops when t ends. It
// fails t, naming what to install or run, when node or fauxqs is missing.
func startFauxqs(t *testing.T) string {
	t.Helper()
	modules, err := testenv.FauxqsModules()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", "fauxqs/server.mjs", modules, "0")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting fauxqs: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = stdin.Close() // server.mjs closes fauxqs and exits when its stdin ends
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	addr, ok := listening(stdout, 30*time.Second)
	if !ok {
		t.Fatalf("fauxqs did not report its address within 30 s; its stderr:\n%s", stderr.String())
	}
	return addr
}

// listening reads r until server.mjs prints "listening <url>", for at most timeout.
func listening(r io.Reader, timeout time.Duration) (string, bool) {
	found := make(chan string, 1)
	go func() {
		defer close(found)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if addr, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				found <- addr
				_, _ = io.Copy(io.Discard, r) // keep the pipe drained
				return
			}
		}
	}()
	select {
	case addr, ok := <-found:
		return addr, ok
	case <-time.After(timeout):
		return "", false
	}
}
