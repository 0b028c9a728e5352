package awsemu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
)

// lambdaPathPrefix starts every Lambda API path (REST JSON protocol).
const lambdaPathPrefix = "/2015-03-31/"

// lambdaRoute is one Lambda operation: its method and path pattern, and
// what answers it.
type lambdaRoute struct {
	pattern, action string
	serve           func(e *Emulator, r *http.Request, body []byte) (int, any, *APIError)
}

// lambdaRoutes are the Lambda operations, one line each (the SDK sends the
// mapping collection's path without its trailing slash).
var lambdaRoutes = []lambdaRoute{
	{"POST /2015-03-31/functions", "CreateFunction", (*Emulator).createFunctionHTTP},
	{"GET /2015-03-31/functions/{name}", "GetFunction", (*Emulator).getFunctionHTTP},
	{"PUT /2015-03-31/functions/{name}/code", "UpdateFunctionCode", (*Emulator).updateFunctionCodeHTTP},
	{"PUT /2015-03-31/functions/{name}/configuration", "UpdateFunctionConfiguration", (*Emulator).updateFunctionConfigurationHTTP},
	{"DELETE /2015-03-31/functions/{name}", "DeleteFunction", (*Emulator).deleteFunctionHTTP},
	{"POST /2015-03-31/functions/{name}/invocations", "Invoke", (*Emulator).invokeHTTP},
	{"POST /2015-03-31/event-source-mappings/{$}", "CreateEventSourceMapping", (*Emulator).createESMHTTP},
	{"POST /2015-03-31/event-source-mappings", "CreateEventSourceMapping", (*Emulator).createESMHTTP},
	{"GET /2015-03-31/event-source-mappings/{$}", "ListEventSourceMappings", (*Emulator).listESMHTTP},
	{"GET /2015-03-31/event-source-mappings", "ListEventSourceMappings", (*Emulator).listESMHTTP},
	{"GET /2015-03-31/event-source-mappings/{uuid}", "GetEventSourceMapping", (*Emulator).getESMHTTP},
	{"PUT /2015-03-31/event-source-mappings/{uuid}", "UpdateEventSourceMapping", (*Emulator).updateESMHTTP},
	{"DELETE /2015-03-31/event-source-mappings/{uuid}", "DeleteEventSourceMapping", (*Emulator).deleteESMHTTP},
}

// lambdaMux routes Lambda requests; each handler finds its emulator, body
// and route in the request's context.
var lambdaMux, lambdaActions = func() (*http.ServeMux, map[string]string) {
	mux, actions := http.NewServeMux(), map[string]string{}
	for _, rt := range lambdaRoutes {
		actions[rt.pattern] = rt.action
		mux.HandleFunc(rt.pattern, func(w http.ResponseWriter, r *http.Request) {
			call := r.Context().Value(lambdaCallKey{}).(lambdaCall)
			status, out, apiErr := rt.serve(call.e, r, call.body)
			call.e.writeLambda(w, status, out, apiErr)
		})
	}
	return mux, actions
}()

type lambdaCallKey struct{}

type lambdaCall struct {
	e    *Emulator
	body []byte
}

// lambdaRequest names the Lambda operation a request is for.
func lambdaRequest(r *http.Request, body []byte) request {
	_, pattern := lambdaMux.Handler(r)
	return request{service: "lambda", action: orDefault(lambdaActions[pattern], "Unknown"), body: body, http: r}
}

func (e *Emulator) serveLambda(w http.ResponseWriter, req request) {
	if req.action == "Unknown" {
		writeLambdaError(w, http.StatusNotFound, "UnknownOperationException", "Unknown operation "+req.http.Method+" "+req.http.URL.Path)
		return
	}
	r := req.http.WithContext(context.WithValue(req.http.Context(), lambdaCallKey{}, lambdaCall{e: e, body: req.body}))
	lambdaMux.ServeHTTP(w, r)
}

func (e *Emulator) writeLambda(w http.ResponseWriter, status int, out any, apiErr *APIError) {
	if apiErr != nil {
		writeLambdaError(w, lambdaStatus(apiErr.Code), apiErr.Code, apiErr.Message)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch v := out.(type) {
	case nil:
		w.WriteHeader(status)
		return
	case rawJSON:
		w.Header().Set("X-Amz-Executed-Version", "$LATEST")
		w.WriteHeader(status)
		_, _ = w.Write(v)
		return
	case functionErrorResult:
		w.Header().Set("X-Amz-Executed-Version", "$LATEST")
		w.Header().Set("X-Amz-Function-Error", "Unhandled")
	}
	data, err := json.Marshal(out)
	if err != nil {
		writeLambdaError(w, http.StatusInternalServerError, "ServiceException", err.Error())
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// writeLambdaError answers as Lambda does: the code in X-Amzn-ErrorType and
// the message in the body.
func writeLambdaError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", code)
	w.WriteHeader(status)
	out, _ := json.Marshal(map[string]string{"Type": "User", "message": msg}) //nolint:errchkjson // strings
	_, _ = w.Write(out)
}

func lambdaStatus(code string) int {
	switch code {
	case "ResourceNotFoundException":
		return http.StatusNotFound
	case "ResourceConflictException":
		return http.StatusConflict
	case "ServiceException":
		return http.StatusInternalServerError
	case "TooManyRequestsException":
		return http.StatusTooManyRequests
	}
	return http.StatusBadRequest
}

func decodeLambda(body []byte, v any) *APIError {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return &APIError{"InvalidRequestContentException", "Could not parse request body into json: " + err.Error()}
	}
	return nil
}

func (e *Emulator) createFunctionHTTP(_ *http.Request, body []byte) (int, any, *APIError) {
	var in createFunctionInput
	if apiErr := decodeLambda(body, &in); apiErr != nil {
		return 0, nil, apiErr
	}
	out, apiErr := e.createFunction(in)
	return http.StatusCreated, out, apiErr
}

func (e *Emulator) getFunctionHTTP(r *http.Request, _ []byte) (int, any, *APIError) {
	out, apiErr := e.getFunction(r.PathValue("name"))
	return http.StatusOK, out, apiErr
}

func (e *Emulator) updateFunctionCodeHTTP(r *http.Request, body []byte) (int, any, *APIError) {
	var in updateFunctionCodeInput
	if apiErr := decodeLambda(body, &in); apiErr != nil {
		return 0, nil, apiErr
	}
	out, apiErr := e.updateFunctionCode(r.PathValue("name"), in)
	return http.StatusOK, out, apiErr
}

func (e *Emulator) deleteFunctionHTTP(r *http.Request, _ []byte) (int, any, *APIError) {
	return http.StatusNoContent, nil, e.deleteFunction(r.PathValue("name"))
}

func (e *Emulator) createESMHTTP(_ *http.Request, body []byte) (int, any, *APIError) {
	var in esmInput
	if apiErr := decodeLambda(body, &in); apiErr != nil {
		return 0, nil, apiErr
	}
	out, apiErr := e.createEventSourceMapping(in)
	return http.StatusAccepted, out, apiErr
}

func (e *Emulator) listESMHTTP(r *http.Request, _ []byte) (int, any, *APIError) {
	q := r.URL.Query()
	out, apiErr := e.listEventSourceMappings(listESMInput{FunctionName: q.Get("FunctionName"), EventSourceArn: q.Get("EventSourceArn")})
	return http.StatusOK, out, apiErr
}

func (e *Emulator) getESMHTTP(r *http.Request, _ []byte) (int, any, *APIError) {
	out, apiErr := e.getEventSourceMapping(r.PathValue("uuid"))
	return http.StatusOK, out, apiErr
}

func (e *Emulator) updateESMHTTP(r *http.Request, body []byte) (int, any, *APIError) {
	var in esmInput
	if apiErr := decodeLambda(body, &in); apiErr != nil {
		return 0, nil, apiErr
	}
	in.UUID = r.PathValue("uuid")
	out, apiErr := e.updateEventSourceMapping(in)
	return http.StatusAccepted, out, apiErr
}

func (e *Emulator) deleteESMHTTP(r *http.Request, _ []byte) (int, any, *APIError) {
	out, apiErr := e.deleteEventSourceMapping(r.PathValue("uuid"))
	return http.StatusAccepted, out, apiErr
}

// invokeHTTP runs the function once (RequestResponse), or in the
// background (Event, 202), or not at all (DryRun, 204). A function error is
// a 200 with X-Amz-Function-Error and the error document.
func (e *Emulator) invokeHTTP(r *http.Request, body []byte) (int, any, *APIError) {
	name := r.PathValue("name")
	e.mu.Lock()
	fn, apiErr := e.functionLocked(name)
	e.mu.Unlock()
	if apiErr != nil {
		return 0, nil, apiErr
	}
	switch r.Header.Get("X-Amz-Invocation-Type") {
	case "DryRun":
		return http.StatusNoContent, nil, nil
	case "Event":
		go func() { _, _ = e.runInstance(context.Background(), fn, body) }()
		return http.StatusAccepted, nil, nil
	}
	out, err := e.runInstance(r.Context(), fn, body)
	var fnErr *FunctionError
	switch {
	case errors.As(err, &fnErr):
		return http.StatusOK, functionErrorResult{fnErr}, nil
	case err != nil:
		return 0, nil, &APIError{"ServiceException", err.Error()}
	}
	return http.StatusOK, rawJSON(out), nil
}

// functionErrorResult is a function's error document; writeLambda marks it.
type functionErrorResult struct{ err *FunctionError }

func (f functionErrorResult) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]string{"errorType": f.err.Type, "errorMessage": f.err.Message})
}

// rawJSON is a function's response, written as it came.
type rawJSON []byte
