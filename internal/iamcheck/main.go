package iamcheck

import (
	"bufio"
	"bytes"
	_ "embed" // replay.mjs
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// ReportEnv names a file that Main appends one line to per test package:
// the package, the decisions heard, those replayed, the disagreements, and
// the replay's wall-clock seconds.
// make test's figures come from it.
const ReportEnv = "STOWAGE_IAMCHECK_REPORT"

// Main runs a test package's tests while logging every authorization
// decision of its emulators, then replays the log through iam-simulate;
// it returns the exit code for os.Exit: the tests', or 1 when a decision
// is not iam-simulate's or the replay cannot run (naming make tools when
// its packages are missing).
//
//	func TestMain(m *testing.M) { os.Exit(iamcheck.Main(m)) }
func Main(m *testing.M) int { return Run(m.Run) }

// Run is Main for a TestMain that runs its tests itself, through run.
func Run(run func() int) int {
	dir, err := os.MkdirTemp("", "stowage-iamcheck-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "iamcheck:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	log, err := NewLog(filepath.Join(dir, "decisions.jsonl"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "iamcheck:", err)
		return 1
	}
	awsemu.ObserveEveryAuthorization(log.Add)
	code := run()
	total, distinct, err := log.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "iamcheck: writing the decisions:", err)
		return 1
	}
	if code != 0 || testing.Short() || distinct == 0 {
		return code
	}
	start := time.Now() //nolint:forbidigo // the replay's cost, for the report
	res, err := Replay(dir, filepath.Join(dir, "decisions.jsonl"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "iamcheck:", err)
		return 1
	}
	report(total, res, time.Since(start)) //nolint:forbidigo // as above
	if len(res.Disagreements) > 0 {
		fmt.Fprintf(os.Stderr, "iamcheck: iam-simulate disagrees with the emulator on %d of %d decisions:\n", len(res.Disagreements), res.Replayed)
		for i, d := range res.Disagreements {
			if i == 20 {
				fmt.Fprintf(os.Stderr, "... and %d more\n", len(res.Disagreements)-i)
				break
			}
			fmt.Fprintln(os.Stderr, string(d))
		}
		return 1
	}
	return 0
}

// report appends the package's figures to the ReportEnv file, if set.
func report(total int, res Result, took time.Duration) {
	path := os.Getenv(ReportEnv)
	if path == "" {
		return
	}
	pkg, _ := os.Getwd()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600) //nolint:gosec // a report the caller names
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s decisions=%d replayed=%d unvalidated=%d disagreements=%d replay_seconds=%.1f\n", pkg, total, res.Replayed,
		res.Unvalidated, len(res.Disagreements), took.Seconds())
}

// Result is what a replay found.
type Result struct {
	Replayed int
	// Unvalidated are those iam-simulate evaluated without validating the
	// request: resources whose ARN has no account, as AWS's public SSM
	// parameters', which it cannot type.
	Unvalidated int
	// Disagreements are replay.mjs's lines, one per decision iam-simulate
	// makes otherwise (or cannot make, or makes on fewer context keys).
	Disagreements []json.RawMessage
}

//go:embed replay.mjs
var replayScript []byte

// Replay runs replay.mjs, written into dir, on a log.
func Replay(dir, path string) (Result, error) {
	modules, err := testenv.IAMCheckModules()
	if err != nil {
		return Result{}, err
	}
	script := filepath.Join(dir, "replay.mjs")
	if err := os.WriteFile(script, replayScript, 0o600); err != nil {
		return Result{}, err
	}
	var stderr bytes.Buffer
	cmd := exec.Command("node", script, modules, path)
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return Result{}, err
	}
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("starting replay.mjs: %w", err)
	}
	res, readErr := readReplay(out)
	if err := cmd.Wait(); err != nil {
		return Result{}, fmt.Errorf("replay.mjs: %w\n%s", err, stderr.String())
	}
	return res, readErr
}

func readReplay(r io.Reader) (Result, error) {
	var res Result
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	done := false
	for sc.Scan() {
		var end struct {
			Replayed    *int `json:"replayed"`
			Unvalidated int  `json:"unvalidated"`
		}
		line := append(json.RawMessage(nil), sc.Bytes()...)
		if json.Unmarshal(line, &end) == nil && end.Replayed != nil {
			res.Replayed, res.Unvalidated, done = *end.Replayed, end.Unvalidated, true
			continue
		}
		res.Disagreements = append(res.Disagreements, line)
	}
	if err := sc.Err(); err != nil {
		return res, err
	}
	if !done {
		return res, fmt.Errorf("replay.mjs ended without its count")
	}
	return res, nil
}
