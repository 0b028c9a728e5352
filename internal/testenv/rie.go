package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// rieReadyTimeout bounds the wait for the runtime interface emulator to listen.
const rieReadyTimeout = 20 * time.Second

// RIE is one Lambda execution environment: a function's bootstrap run by
// the AWS Lambda runtime interface emulator (aws-lambda-rie), on loopback
// only. It takes one invocation at a time, as RIE does.
type RIE struct {
	// Dir holds the code (the bootstrap) and RIE's log, which carries the
	// function's output.
	Dir string

	url    string
	proc   *process
	client *http.Client
	mu     sync.Mutex // one invocation at a time
}

// FunctionError is a function's failure as RIE reports it: HTTP 200 with
// errorMessage and errorType (and no X-Amz-Function-Error header).
type FunctionError struct {
	Type, Message string
}

func (e *FunctionError) Error() string { return e.Type + ": " + e.Message }

// StartRIE runs dir/bootstrap under aws-lambda-rie with exactly env as the
// function's environment (RIE passes its own to the handler, so nothing of
// this process's environment leaks in), and waits until it listens.
func StartRIE(dir string, env []string) (*RIE, error) {
	bin, err := Assets(LambdaRIE)
	if err != nil {
		return nil, err
	}
	apiPort, err := freePort()
	if err != nil {
		return nil, err
	}
	runtimePort, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(apiPort)
	cmd := exec.Command(filepath.Join(bin, LambdaRIE), // both addresses on loopback: RIE binds 0.0.0.0 by default
		"--runtime-interface-emulator-address", addr,
		"--runtime-api-address", "127.0.0.1:"+strconv.Itoa(runtimePort),
		filepath.Join(dir, "bootstrap"))
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + dir, "LAMBDA_TASK_ROOT=" + dir}, env...)
	proc, err := runProcess(LambdaRIE, dir, cmd)
	if err != nil {
		return nil, err
	}
	r := &RIE{Dir: dir, proc: proc, url: "http://" + addr + "/2015-03-31/functions/function/invocations",
		client: &http.Client{Transport: &http.Transport{Proxy: nil}}}
	if err := r.waitListening(addr); err != nil {
		return nil, errors.Join(err, proc.stop())
	}
	return r, nil
}

func (r *RIE) waitListening(addr string) error {
	deadline := time.Now().Add(rieReadyTimeout)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			return conn.Close()
		}
		if r.proc.exited() {
			return r.proc.exitError()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("aws-lambda-rie did not listen on %s within %s: %w", addr, rieReadyTimeout, err)
		}
		select {
		case <-r.proc.done:
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Invoke runs one invocation and returns the function's response; a
// function error is a *FunctionError.
func (r *RIE) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	resp, err := r.client.Do(req)
	if err != nil {
		if r.proc.exited() {
			return nil, r.proc.exitError()
		}
		return nil, fmt.Errorf("invoking the function: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading the function's response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("aws-lambda-rie answered %s: %s", resp.Status, body)
	}
	if fe := functionError(body); fe != nil {
		return nil, fe
	}
	return body, nil
}

// functionError reads RIE's error document: an object whose keys are
// errorMessage and errorType (and perhaps stackTrace) alone.
func functionError(body []byte) *FunctionError {
	var doc map[string]json.RawMessage
	if json.Unmarshal(body, &doc) != nil || doc["errorMessage"] == nil || doc["errorType"] == nil {
		return nil
	}
	delete(doc, "stackTrace")
	if len(doc) != 2 {
		return nil
	}
	var fe FunctionError
	_ = json.Unmarshal(doc["errorType"], &fe.Type)
	_ = json.Unmarshal(doc["errorMessage"], &fe.Message)
	return &fe
}

// Logs returns RIE's log: its START, END and REPORT lines and everything
// the function wrote.
func (r *RIE) Logs() string {
	data, err := os.ReadFile(r.proc.logPath)
	if err != nil {
		return fmt.Sprintf("(reading %s: %v)", r.proc.logPath, err)
	}
	return string(data)
}

// PID is aws-lambda-rie's process id (the bootstrap runs as its child).
func (r *RIE) PID() int { return r.proc.cmd.Process.Pid }

// Close stops RIE and the function.
func (r *RIE) Close() error { return r.proc.stop() }
