package awsemu

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// lambdaState holds the functions and their event source mappings.
type lambdaState struct {
	functions map[string]*function // name -> function
	mappings  map[string]*mapping  // uuid -> mapping
	runtime   FunctionRuntime
	// retired functions were deleted; their environments end at Shutdown
	// if closing them when deleted was still under way.
	retired []*function
}

func newLambdaState() lambdaState {
	return lambdaState{functions: map[string]*function{}, mappings: map[string]*mapping{}}
}

// function is a Lambda function ($LATEST only: versions and aliases are not
// emulated).
type function struct {
	name, role, runtime, handler, description string
	architectures                             []string
	timeout, memory                           int // seconds, MB
	env                                       map[string]string
	zip                                       []byte
	lastModified                              time.Time
	revision                                  int
	vpc                                       *vpcConfig // lambda_configuration.go
	// cred is the execution role's session the code signs with.
	cred    Credential
	deleted bool

	invokeMu     sync.Mutex // one invocation at a time; guards inst
	inst         FunctionInstance
	instRevision int
}

// Defaults and limits Lambda documents.
const (
	defaultFunctionTimeout = 3
	maxFunctionTimeout     = 900
	defaultFunctionMemory  = 128
	lambdaTimeLayout       = "2006-01-02T15:04:05.000-0700"
)

var functionNamePattern = regexp.MustCompile(`^[a-zA-Z0-9-_]{1,64}$`)

type functionEnvironment struct {
	Variables map[string]string `json:"Variables"`
}

type createFunctionInput struct {
	FunctionName  string               `json:"FunctionName"`
	Runtime       string               `json:"Runtime"`
	Role          string               `json:"Role"`
	Handler       string               `json:"Handler"`
	Description   string               `json:"Description"`
	Timeout       int                  `json:"Timeout"`
	MemorySize    int                  `json:"MemorySize"`
	Architectures []string             `json:"Architectures"`
	Environment   *functionEnvironment `json:"Environment"`
	PackageType   string               `json:"PackageType"`
	Code          struct {
		ZipFile []byte `json:"ZipFile"`
	} `json:"Code"`
	VpcConfig *vpcConfig `json:"VpcConfig"`
}

// functionConfiguration is Lambda's FunctionConfiguration.
type functionConfiguration struct {
	FunctionName     string               `json:"FunctionName"`
	FunctionArn      string               `json:"FunctionArn"`
	Runtime          string               `json:"Runtime,omitempty"`
	Role             string               `json:"Role"`
	Handler          string               `json:"Handler,omitempty"`
	Description      string               `json:"Description"`
	CodeSize         int                  `json:"CodeSize"`
	CodeSha256       string               `json:"CodeSha256"`
	Timeout          int                  `json:"Timeout"`
	MemorySize       int                  `json:"MemorySize"`
	LastModified     string               `json:"LastModified"`
	Version          string               `json:"Version"`
	Environment      *functionEnvironment `json:"Environment,omitempty"`
	Architectures    []string             `json:"Architectures"`
	PackageType      string               `json:"PackageType"`
	State            string               `json:"State"`
	LastUpdateStatus string               `json:"LastUpdateStatus"`
	RevisionID       string               `json:"RevisionId"`
	VpcConfig        *vpcConfig           `json:"VpcConfig,omitempty"`
}

func (e *Emulator) functionARN(name string) string {
	return "arn:aws:lambda:" + e.cfg.Region + ":" + e.cfg.AccountID + ":function:" + name
}

// CreateFunction creates a zip-packaged function; its role must be an IAM
// role ARN of the account, and the zip a valid zip. The function gets a
// session of its role to sign with.
func (e *Emulator) createFunction(in createFunctionInput) (*functionConfiguration, *APIError) {
	if apiErr := validateFunction(in, e.cfg.AccountID); apiErr != nil {
		return nil, apiErr
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.lambda.functions[in.FunctionName]; ok {
		return nil, &APIError{"ResourceConflictException", "Function already exist: " + in.FunctionName}
	}
	fn := &function{name: in.FunctionName, role: in.Role, runtime: in.Runtime, handler: in.Handler, description: in.Description,
		architectures: orDefaultList(in.Architectures, "x86_64"), timeout: in.Timeout, memory: in.MemorySize,
		env: map[string]string{}, zip: in.Code.ZipFile, lastModified: e.clk.Now(), revision: 1}
	if fn.timeout == 0 {
		fn.timeout = defaultFunctionTimeout
	}
	if fn.memory == 0 {
		fn.memory = defaultFunctionMemory
	}
	if in.Environment != nil {
		for k, v := range in.Environment.Variables {
			fn.env[k] = v
		}
	}
	fn.vpc = in.VpcConfig.orNil()
	fn.cred = e.roleSessionLocked(fn.role, fn.name)
	e.lambda.functions[fn.name] = fn
	return e.configurationLocked(fn), nil
}

var roleARNPattern = regexp.MustCompile(`^arn:aws:iam::(\d{12}):role/[\w+=,.@/-]+$`)

func validateFunction(in createFunctionInput, account string) *APIError {
	switch {
	case !functionNamePattern.MatchString(in.FunctionName):
		return &APIError{"ValidationException", "1 validation error detected: Value '" + in.FunctionName + "' at 'functionName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9-_]+"}
	case in.PackageType != "" && in.PackageType != "Zip":
		return &APIError{"InvalidParameterValueException", "Only Zip packages are emulated."}
	case in.Timeout < 0 || in.Timeout > maxFunctionTimeout:
		return &APIError{"ValidationException", "1 validation error detected: Value at 'timeout' failed to satisfy constraint: Member must have value less than or equal to 900"}
	}
	if m := roleARNPattern.FindStringSubmatch(in.Role); m == nil || m[1] != account {
		return &APIError{"ValidationException", "1 validation error detected: Value '" + in.Role + "' at 'role' failed to satisfy constraint: Member must satisfy regular expression pattern: arn:(aws[a-zA-Z-]*)?:iam::\\d{12}:role/?[a-zA-Z_0-9+=,.@\\-_/]+"}
	}
	if in.Runtime == "" || in.Runtime == "provided.al2023" || in.Runtime == "provided.al2" {
		return validZip(in.Code.ZipFile)
	}
	return &APIError{"InvalidParameterValueException", "The runtime parameter of " + in.Runtime + " is not emulated: use provided.al2023."}
}

// validZip checks a deployment package is a zip that holds a bootstrap.
func validZip(data []byte) *APIError {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return &APIError{"InvalidParameterValueException", "Could not unzip uploaded file. Please check your file, then try to upload again."}
	}
	for _, f := range zr.File {
		if f.Name == "bootstrap" {
			return nil
		}
	}
	return &APIError{"InvalidParameterValueException", "The deployment package has no bootstrap file for the provided runtime."}
}

func orDefaultList(v []string, def string) []string {
	if len(v) == 0 {
		return []string{def}
	}
	return append([]string(nil), v...)
}

func (e *Emulator) configurationLocked(fn *function) *functionConfiguration {
	sum := sha256.Sum256(fn.zip)
	c := &functionConfiguration{FunctionName: fn.name, FunctionArn: e.functionARN(fn.name), Runtime: fn.runtime, Role: fn.role,
		Handler: fn.handler, Description: fn.description, CodeSize: len(fn.zip), CodeSha256: base64.StdEncoding.EncodeToString(sum[:]),
		Timeout: fn.timeout, MemorySize: fn.memory, LastModified: fn.lastModified.UTC().Format(lambdaTimeLayout), Version: "$LATEST",
		Architectures: fn.architectures, PackageType: "Zip", State: "Active", LastUpdateStatus: "Successful",
		RevisionID: fmt.Sprintf("00000000-0000-4000-8000-%012d", fn.revision)}
	if len(fn.env) > 0 {
		c.Environment = &functionEnvironment{Variables: fn.env}
	}
	c.VpcConfig = fn.vpc
	return c
}

// functionLocked finds a function by name or ARN.
func (e *Emulator) functionLocked(nameOrARN string) (*function, *APIError) {
	name := nameOrARN
	if i := strings.LastIndex(nameOrARN, ":function:"); i >= 0 {
		name = nameOrARN[i+len(":function:"):]
	}
	fn, ok := e.lambda.functions[name]
	if !ok {
		return nil, &APIError{"ResourceNotFoundException", "Function not found: " + e.functionARN(name)}
	}
	return fn, nil
}

func (e *Emulator) getFunction(name string) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	fn, apiErr := e.functionLocked(name)
	if apiErr != nil {
		return nil, apiErr
	}
	return map[string]any{"Configuration": e.configurationLocked(fn),
		"Code": map[string]string{"RepositoryType": "S3", "Location": "https://awslambda-" + e.cfg.Region + "-tasks.s3.amazonaws.com/snapshots/" + fn.name}}, nil
}

type updateFunctionCodeInput struct {
	ZipFile       []byte   `json:"ZipFile"`
	Architectures []string `json:"Architectures"`
}

// updateFunctionCode replaces the code; the next invocation starts a new
// execution environment.
func (e *Emulator) updateFunctionCode(name string, in updateFunctionCodeInput) (*functionConfiguration, *APIError) {
	if apiErr := validZip(in.ZipFile); apiErr != nil {
		return nil, apiErr
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	fn, apiErr := e.functionLocked(name)
	if apiErr != nil {
		return nil, apiErr
	}
	fn.zip, fn.lastModified = in.ZipFile, e.clk.Now()
	if len(in.Architectures) > 0 {
		fn.architectures = append([]string(nil), in.Architectures...)
	}
	fn.revision++
	return e.configurationLocked(fn), nil
}

// deleteFunction deletes a function and ends its execution environment
// once its current invocation returns.
func (e *Emulator) deleteFunction(name string) *APIError {
	e.mu.Lock()
	fn, apiErr := e.functionLocked(name)
	if apiErr == nil {
		fn.deleted = true
		delete(e.lambda.functions, fn.name)
		e.lambda.retired = append(e.lambda.retired, fn)
	}
	e.mu.Unlock()
	if apiErr != nil {
		return apiErr
	}
	go func() { _ = fn.closeInstance() }()
	return nil
}

// codeLocked is what an execution environment of fn runs.
func (fn *function) codeLocked(e *Emulator) FunctionCode {
	env := make([]string, 0, len(fn.env)+12)
	keys := make([]string, 0, len(fn.env))
	for k := range fn.env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+fn.env[k])
	}
	env = append(env, "AWS_REGION="+e.cfg.Region, "AWS_DEFAULT_REGION="+e.cfg.Region,
		"AWS_LAMBDA_FUNCTION_NAME="+fn.name, "AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		fmt.Sprintf("AWS_LAMBDA_FUNCTION_MEMORY_SIZE=%d", fn.memory), "AWS_EXECUTION_ENV=AWS_Lambda_"+fn.runtime,
		"AWS_ACCESS_KEY_ID="+fn.cred.AccessKeyID, "AWS_SECRET_ACCESS_KEY="+fn.cred.SecretAccessKey,
		"AWS_SESSION_TOKEN="+fn.cred.SessionToken)
	return FunctionCode{Name: fn.name, Zip: fn.zip, Runtime: fn.runtime, Handler: fn.handler, Architecture: fn.architectures[0],
		Timeout: time.Duration(fn.timeout) * time.Second, Environment: env}
}

// FunctionCredential returns the execution role session a function signs
// with, and whether the function exists.
func (e *Emulator) FunctionCredential(name string) (Credential, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	fn, ok := e.lambda.functions[name]
	if !ok {
		return Credential{}, false
	}
	return fn.cred, true
}
