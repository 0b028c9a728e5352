package awsemu

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// FunctionRuntime runs functions' code, as Lambda's workers do: the bed
// plugs in the AWS Lambda runtime interface emulator (internal/testbed), so
// that a function's bootstrap runs as it does on AWS. Without one, every
// invocation fails with a ServiceException.
type FunctionRuntime interface {
	// Start prepares one execution environment for the code; invocations
	// reach it one at a time.
	Start(code FunctionCode) (FunctionInstance, error)
}

// FunctionCode is what an execution environment runs.
type FunctionCode struct {
	// Name is the function's name.
	Name string
	// Zip is the deployment package.
	Zip []byte
	// Runtime (e.g. provided.al2023) and Handler are the function's.
	Runtime, Handler string
	// Architecture is x86_64 or arm64.
	Architecture string
	// Timeout bounds one invocation.
	Timeout time.Duration
	// Environment is KEY=VALUE: the function's variables, then those Lambda
	// sets (region, function name, the execution role's credentials).
	Environment []string
}

// FunctionInstance is one execution environment.
type FunctionInstance interface {
	// Invoke runs one invocation and returns the function's response. The
	// function's own failure is a *FunctionError; any other error is the
	// runtime's.
	Invoke(ctx context.Context, payload []byte) ([]byte, error)
	// Close ends the environment.
	Close() error
}

// FunctionError is a function's failure, as Lambda reports it.
type FunctionError struct {
	Type, Message string
}

func (e *FunctionError) Error() string { return fmt.Sprintf("%s: %s", e.Type, e.Message) }

// SetFunctionRuntime sets what runs functions' code.
func (e *Emulator) SetFunctionRuntime(r FunctionRuntime) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lambda.runtime = r
}

// errNoRuntime fails invocations of an emulator without a FunctionRuntime.
var errNoRuntime = errors.New("no function runtime is set (Emulator.SetFunctionRuntime)")

// runInstance runs one invocation of fn on its execution environment,
// starting one (again, after a code update) when needed.
func (e *Emulator) runInstance(ctx context.Context, fn *function, payload []byte) ([]byte, error) {
	fn.invokeMu.Lock()
	defer fn.invokeMu.Unlock()
	e.mu.Lock()
	rt, code, revision, deleted := e.lambda.runtime, fn.codeLocked(e), fn.revision, fn.deleted
	e.mu.Unlock()
	if deleted {
		return nil, fmt.Errorf("function %s was deleted", fn.name)
	}
	if rt == nil {
		return nil, errNoRuntime
	}
	if fn.inst != nil && fn.instRevision != revision {
		_ = fn.inst.Close()
		fn.inst = nil
	}
	if fn.inst == nil {
		inst, err := rt.Start(code)
		if err != nil {
			return nil, fmt.Errorf("starting an execution environment for %s: %w", fn.name, err)
		}
		fn.inst, fn.instRevision = inst, revision
	}
	ctx, cancel := context.WithTimeout(ctx, code.Timeout)
	defer cancel()
	return fn.inst.Invoke(ctx, payload)
}

// closeInstance ends fn's execution environment once its invocation returns.
func (fn *function) closeInstance() error {
	fn.invokeMu.Lock()
	defer fn.invokeMu.Unlock()
	if fn.inst == nil {
		return nil
	}
	err := fn.inst.Close()
	fn.inst = nil
	return err
}

// Shutdown stops every event source mapping's poller and ends every
// execution environment. The emulator's model stays readable.
func (e *Emulator) Shutdown() error {
	e.mu.Lock()
	var pollers []*poller
	for _, m := range e.lambda.mappings {
		if m.poller != nil {
			pollers = append(pollers, m.poller)
		}
	}
	fns := make([]*function, 0, len(e.lambda.functions)+len(e.lambda.retired))
	for _, fn := range e.lambda.functions {
		fns = append(fns, fn)
	}
	fns = append(fns, e.lambda.retired...)
	e.mu.Unlock()
	for _, p := range pollers {
		p.halt()
	}
	var errs []error
	for _, fn := range fns {
		errs = append(errs, fn.closeInstance())
	}
	return errors.Join(errs...)
}
