package awsemu

import (
	"encoding/json"
	"net/http"
	"strings"
)

// jsonNamespaces are the smithy namespaces JSON errors are qualified with.
var jsonNamespaces = map[string]string{
	"sqs": "com.amazonaws.sqs", "ssm": "com.amazonaws.ssm",
	"pricing": "com.amazonaws.pricing", "events": "com.amazonaws.eventbridge",
	"logs": "com.amazonaws.cloudwatchlogs",
}

func jsonContentType(service string) string {
	if service == "sqs" {
		return "application/x-amz-json-1.0"
	}
	return "application/x-amz-json-1.1"
}

func writeJSON(w http.ResponseWriter, service string, v any) {
	out, err := json.Marshal(v)
	if err != nil {
		writeJSONError(w, service, http.StatusInternalServerError, "InternalError", err.Error())
		return
	}
	w.Header().Set("Content-Type", jsonContentType(service))
	_, _ = w.Write(out)
}

func writeJSONError(w http.ResponseWriter, service string, status int, code, msg string) {
	w.Header().Set("Content-Type", jsonContentType(service))
	w.Header().Set("X-Amzn-ErrorType", code)
	if service == "sqs" {
		w.Header().Set("X-Amzn-Query-Error", sqsQueryError(code, status))
	}
	w.WriteHeader(status)
	out, _ := json.Marshal(map[string]string{"__type": jsonNamespaces[service] + "#" + code, "message": msg}) //nolint:errchkjson // strings
	_, _ = w.Write(out)
}

// jsonCall decodes a JSON request into in, runs fn and writes its answer.
func jsonCall[In any](w http.ResponseWriter, req request, fn func(In) (any, *APIError)) {
	var in In
	if len(strings.TrimSpace(string(req.body))) > 0 {
		if err := json.Unmarshal(req.body, &in); err != nil {
			writeJSONError(w, req.service, http.StatusBadRequest, "SerializationException", err.Error())
			return
		}
	}
	out, apiErr := fn(in)
	if apiErr != nil {
		writeJSONError(w, req.service, jsonStatus(apiErr.Code), apiErr.Code, apiErr.Message)
		return
	}
	writeJSON(w, req.service, out)
}

func jsonStatus(code string) int {
	if code == "InternalError" || code == "InternalServerError" {
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}

type getParameterInput struct {
	Name string `json:"Name"`
}

type ssmParameter struct {
	Name             string  `json:"Name"`
	Type             string  `json:"Type"`
	Value            string  `json:"Value"`
	Version          int     `json:"Version"`
	ARN              string  `json:"ARN"`
	DataType         string  `json:"DataType"`
	LastModifiedDate float64 `json:"LastModifiedDate"`
}

type putParameterInput struct {
	Name      string `json:"Name"`
	Value     string `json:"Value"`
	Overwrite bool   `json:"Overwrite"`
}

func (e *Emulator) serveSSM(w http.ResponseWriter, req request) {
	switch req.action {
	case "GetParameter":
		jsonCall(w, req, e.ssmGetParameter)
	case "PutParameter":
		jsonCall(w, req, e.ssmPutParameter)
	default:
		writeJSONError(w, "ssm", http.StatusBadRequest, "InvalidAction", "unknown SSM action "+req.action)
	}
}

func (e *Emulator) ssmGetParameter(in getParameterInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	v, ok := e.params[in.Name]
	if !ok {
		return nil, &APIError{"ParameterNotFound", "Parameter " + in.Name + " not found."}
	}
	dataType := "text"
	if strings.HasPrefix(v, "ami-") {
		dataType = "aws:ec2:image"
	}
	return map[string]ssmParameter{"Parameter": {Name: in.Name, Type: "String", Value: v, Version: 1,
		ARN:      "arn:aws:ssm:" + e.cfg.Region + "::parameter" + in.Name,
		DataType: dataType, LastModifiedDate: float64(e.clk.Now().Unix())}}, nil
}

func (e *Emulator) ssmPutParameter(in putParameterInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.params[in.Name]; ok && !in.Overwrite {
		return nil, &APIError{"ParameterAlreadyExists", "The parameter already exists."}
	}
	e.params[in.Name] = in.Value
	return map[string]any{"Version": 1, "Tier": "Standard"}, nil
}
