package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// stopGrace is how long a process may take to exit after SIGTERM before it is killed.
const stopGrace = 5 * time.Second

// logTailLines is how much of a process's log an error or a failing test shows.
const logTailLines = 40

// process is one running component, logging to its own file.
type process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	logFile *os.File
	done    chan struct{}
	err     error // set before done is closed
}

// startProcess runs bin with args, its output going to logDir/name.log.
func startProcess(name, bin, logDir string, args, env []string) (*process, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	return runProcess(name, logDir, cmd)
}

// runProcess starts cmd, its output going to logDir/name.log.
func runProcess(name, logDir string, cmd *exec.Cmd) (*process, error) {
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating the %s log: %w", name, err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, logPath: logPath, cmd: cmd, logFile: logFile, done: make(chan struct{})}
	go p.wait()
	return p, nil
}

func (p *process) wait() {
	p.err = p.cmd.Wait()
	_ = p.logFile.Close()
	close(p.done)
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitError describes an unexpected exit, with the tail of the log.
func (p *process) exitError() error {
	return fmt.Errorf("%s exited early (%v); last lines of %s:\n%s", p.name, p.err, p.logPath, p.tail(logTailLines))
}

// stop sends SIGTERM, then SIGKILL after stopGrace, and waits for the exit.
func (p *process) stop() error {
	if p.exited() {
		return nil
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signalling %s: %w", p.name, err)
	}
	timer := time.NewTimer(stopGrace)
	defer timer.Stop()
	select {
	case <-p.done:
		return nil
	case <-timer.C:
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("killing %s: %w", p.name, err)
	}
	<-p.done
	return nil
}

// tail returns the last n lines of the process's log.
func (p *process) tail(n int) string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(reading %s: %v)", p.logPath, err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// flags renders name=value pairs as --name=value arguments in the given order.
func flags(pairs ...string) []string {
	args := make([]string, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		args = append(args, "--"+pairs[i]+"="+pairs[i+1])
	}
	return args
}

// joinComma joins values for list flags.
func joinComma(values []string) string { return strings.Join(values, ",") }
