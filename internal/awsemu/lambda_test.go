package awsemu_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

const roleARN = "arn:aws:iam::123456789012:role/interruption-lambda"

// zipOf is a deployment package holding bootstrap with the content.
func zipOf(t *testing.T, content string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	f, err := zw.Create("bootstrap")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.Write([]byte(content))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// goRuntime runs functions in process: each invocation calls the handler
// with the code's bootstrap content and the payload. It stands in for the
// runtime interface emulator, which internal/testbed plugs in.
type goRuntime struct {
	mu       sync.Mutex
	handle   func(code awsemu.FunctionCode, payload []byte) ([]byte, error)
	starts   int
	closes   int
	payloads [][]byte
}

func (r *goRuntime) Start(code awsemu.FunctionCode) (awsemu.FunctionInstance, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.starts++
	return &goInstance{r: r, code: code}, nil
}

type goInstance struct {
	r    *goRuntime
	code awsemu.FunctionCode
}

func (i *goInstance) Invoke(_ context.Context, payload []byte) ([]byte, error) {
	i.r.mu.Lock()
	i.r.payloads = append(i.r.payloads, payload)
	handle := i.r.handle
	i.r.mu.Unlock()
	return handle(i.code, payload)
}

func (i *goInstance) Close() error {
	i.r.mu.Lock()
	defer i.r.mu.Unlock()
	i.r.closes++
	return nil
}

func createFunction(t *testing.T, l *lambda.Client, name string, zipFile []byte, timeout int32) *lambda.CreateFunctionOutput {
	t.Helper()
	out, err := l.CreateFunction(context.Background(), &lambda.CreateFunctionInput{
		FunctionName: awssdk.String(name), Role: awssdk.String(roleARN), Runtime: lambdatypes.RuntimeProvidedal2023,
		Handler: awssdk.String("bootstrap"), Code: &lambdatypes.FunctionCode{ZipFile: zipFile}, Timeout: awssdk.Int32(timeout),
		Architectures: []lambdatypes.Architecture{lambdatypes.ArchitectureX8664},
		Environment:   &lambdatypes.Environment{Variables: map[string]string{"REBALANCE_RECOMMENDATION": "mark"}},
	})
	if err != nil {
		t.Fatalf("CreateFunction: %v", err)
	}
	return out
}

// TestFunctionLifecycle creates, reads, invokes, updates and deletes a
// function through the real Lambda client.
func TestFunctionLifecycle(t *testing.T) {
	e := awsemu.New(awsemu.DefaultConfig())
	rt := &goRuntime{handle: func(code awsemu.FunctionCode, payload []byte) ([]byte, error) {
		if strings.Contains(string(payload), "fail") {
			return nil, &awsemu.FunctionError{Type: "Runtime.Boom", Message: "it failed"}
		}
		return []byte(`{"env":` + mustJSON(code.Environment) + `}`), nil
	}}
	e.SetFunctionRuntime(rt)
	l := lambda.NewFromConfig(client(t, e))
	ctx := context.Background()
	created := createFunction(t, l, "interruption", zipOf(t, "v1"), 30)
	if awssdk.ToString(created.FunctionArn) != "arn:aws:lambda:us-east-1:123456789012:function:interruption" ||
		created.State != lambdatypes.StateActive || created.CodeSize == 0 || awssdk.ToString(created.CodeSha256) == "" {
		t.Errorf("created %+v", created)
	}
	got, err := l.GetFunction(ctx, &lambda.GetFunctionInput{FunctionName: awssdk.String("interruption")})
	if err != nil || awssdk.ToInt32(got.Configuration.Timeout) != 30 || got.Configuration.Environment.Variables["REBALANCE_RECOMMENDATION"] != "mark" {
		t.Fatalf("GetFunction: %+v, %v", got, err)
	}
	out, err := l.Invoke(ctx, &lambda.InvokeInput{FunctionName: awssdk.String("interruption"), Payload: []byte(`{"hello":1}`)})
	if err != nil || out.FunctionError != nil || !strings.Contains(string(out.Payload), "AWS_LAMBDA_FUNCTION_NAME=interruption") ||
		!strings.Contains(string(out.Payload), "AWS_SESSION_TOKEN=") || !strings.Contains(string(out.Payload), "REBALANCE_RECOMMENDATION=mark") {
		t.Fatalf("Invoke: %s, %v", out.Payload, err)
	}
	out, err = l.Invoke(ctx, &lambda.InvokeInput{FunctionName: awssdk.String("interruption"), Payload: []byte(`"fail"`)})
	if err != nil || awssdk.ToString(out.FunctionError) != "Unhandled" || !strings.Contains(string(out.Payload), `"errorType":"Runtime.Boom"`) {
		t.Fatalf("a failing invocation: %+v, %v", out, err)
	}
	if _, err := l.UpdateFunctionCode(ctx, &lambda.UpdateFunctionCodeInput{FunctionName: awssdk.String("interruption"), ZipFile: zipOf(t, "v2")}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Invoke(ctx, &lambda.InvokeInput{FunctionName: awssdk.String("interruption"), Payload: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if rt.starts != 2 || rt.closes != 1 {
		t.Errorf("%d environments started, %d closed; want a new one after the code update", rt.starts, rt.closes)
	}
	if _, err := l.DeleteFunction(ctx, &lambda.DeleteFunctionInput{FunctionName: awssdk.String("interruption")}); err != nil {
		t.Fatal(err)
	}
	var notFound *lambdatypes.ResourceNotFoundException
	if _, err := l.GetFunction(ctx, &lambda.GetFunctionInput{FunctionName: awssdk.String("interruption")}); !errorsAs(err, &notFound) {
		t.Errorf("GetFunction after delete: %v, want ResourceNotFoundException", err)
	}
	if err := e.Shutdown(); err != nil || rt.closes != 2 {
		t.Errorf("Shutdown: %v; %d environments closed, want 2", err, rt.closes)
	}
}

func TestCreateFunctionRefusesWhatLambdaRefuses(t *testing.T) {
	l := lambda.NewFromConfig(client(t, awsemu.New(awsemu.DefaultConfig())))
	ctx := context.Background()
	createFunction(t, l, "taken", zipOf(t, "x"), 3)
	for name, in := range map[string]*lambda.CreateFunctionInput{
		"not a zip":  {FunctionName: awssdk.String("a"), Role: awssdk.String(roleARN), Code: &lambdatypes.FunctionCode{ZipFile: []byte("text")}},
		"bad role":   {FunctionName: awssdk.String("b"), Role: awssdk.String("admin"), Code: &lambdatypes.FunctionCode{ZipFile: zipOf(t, "x")}},
		"taken name": {FunctionName: awssdk.String("taken"), Role: awssdk.String(roleARN), Code: &lambdatypes.FunctionCode{ZipFile: zipOf(t, "x")}},
		"bad name":   {FunctionName: awssdk.String("no spaces"), Role: awssdk.String(roleARN), Code: &lambdatypes.FunctionCode{ZipFile: zipOf(t, "x")}},
	} {
		if _, err := l.CreateFunction(ctx, in); err == nil {
			t.Errorf("%s: created, want an error", name)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
