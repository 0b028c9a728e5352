package awsemu

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
)

// API versions that tell EC2 and IAM query requests apart.
const (
	ec2APIVersion = "2016-11-15"
	iamAPIVersion = "2010-05-08"
)

// request is one decoded call: its service, action and body.
type request struct {
	service string // ec2, iam, sqs, ssm, pricing, events, sts, lambda
	action  string
	form    params // query protocols
	body    []byte // JSON protocols
	path    string // REST protocols, escaped
	query   string // REST protocols' raw query
	rest    func(*Emulator, http.ResponseWriter, request)
	http    *http.Request
}

// restRoute is a JSON-over-REST service: how a request is named, and who serves it.
type restRoute struct {
	service string
	action  func(*http.Request) string
	serve   func(*Emulator, http.ResponseWriter, request)
}

// restRoutes registers the REST services by the first segment of their paths.
var restRoutes = map[string]restRoute{
	"clusters":         {"eks", eksAction, (*Emulator).serveEKS},
	"zonalshifts":      {"arc-zonal-shift", arcAction, (*Emulator).serveARC},
	"autoshifts":       {"arc-zonal-shift", arcAction, (*Emulator).serveARC},
	"managedresources": {"arc-zonal-shift", arcAction, (*Emulator).serveARC},
}

// Handler serves every emulated service on one endpoint: point each SDK
// client's BaseEndpoint at it.
func (e *Emulator) Handler() http.Handler { return http.HandlerFunc(e.serveHTTP) }

// Start serves the emulator on a loopback port; Close the server when done.
func (e *Emulator) Start() *httptest.Server { return httptest.NewServer(e.Handler()) }

func (e *Emulator) serveHTTP(w http.ResponseWriter, r *http.Request) {
	received := e.clk.Now()
	req, err := decodeRequest(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	e.notifyCall(req, received)
	f := e.countAndFault(req.action)
	if !e.authorize(w, r, req) {
		return
	}
	if f != nil && e.applyFault(w, req, f) {
		return
	}
	switch req.service {
	case "ec2":
		e.serveEC2(w, req)
	case "iam":
		e.serveIAM(w, req)
	case "sqs":
		e.serveSQS(w, req)
	case "ssm":
		e.serveSSM(w, req)
	case "pricing":
		e.servePricing(w, req)
	case "events":
		e.serveEvents(w, req)
	case "sts":
		e.serveSTS(w, req)
	case "logs":
		e.serveLogs(w, req)
	case "lambda":
		e.serveLambda(w, req)
	default:
		if req.rest != nil {
			req.rest(e, w, req)
			return
		}
		http.Error(w, "unknown service", http.StatusBadRequest)
	}
}

var jsonTargets = map[string]string{
	"AmazonSQS":           "sqs",
	"AmazonSSM":           "ssm",
	"AWSPriceListService": "pricing",
	"AWSEvents":           "events",
	"Logs_20140328":       "logs",
}

func decodeRequest(r *http.Request) (request, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return request{}, err
	}
	first, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if rt, ok := restRoutes[first]; ok {
		return request{service: rt.service, action: rt.action(r), body: body, path: r.URL.EscapedPath(), query: r.URL.RawQuery, rest: rt.serve, http: r}, nil
	}
	if target := r.Header.Get("X-Amz-Target"); target != "" {
		prefix, action, _ := strings.Cut(target, ".")
		return request{service: jsonTargets[prefix], action: action, body: body, http: r}, nil
	}
	if strings.HasPrefix(r.URL.Path, lambdaPathPrefix) {
		return lambdaRequest(r, body), nil
	}
	query := string(body)
	if r.Method == http.MethodGet {
		query = r.URL.RawQuery // a presigned request
	}
	values, err := url.ParseQuery(query)
	if err != nil {
		return request{}, err
	}
	req := request{action: values.Get("Action"), form: newParams(values), body: body, http: r}
	switch values.Get("Version") {
	case ec2APIVersion:
		req.service = "ec2"
	case iamAPIVersion:
		req.service = "iam"
	case stsAPIVersion:
		req.service = "sts"
	}
	return req, nil
}

// countAndFault counts the call and draws the fault (if any) that hits it.
func (e *Emulator) countAndFault(action string) *Fault {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls[action]++
	return e.takeFaultLocked(action)
}

// applyFault answers the request with the fault, or waits for a latency
// fault; it reports whether the response has been written.
func (e *Emulator) applyFault(w http.ResponseWriter, req request, f *Fault) bool {
	switch f.Kind {
	case FaultLatency:
		<-e.clk.After(f.Delay)
		return false
	case FaultThrottle:
		code, status := throttleCodes[req.service], http.StatusBadRequest
		switch req.service {
		case "ec2":
			status = http.StatusServiceUnavailable
		case "eks", "arc-zonal-shift":
			status = http.StatusTooManyRequests // their models' ThrottlingException is @httpError(429)
		}
		e.writeError(w, req, status, code, orDefault(f.Message, "Rate exceeded"))
	case FaultServerError:
		e.writeError(w, req, http.StatusInternalServerError, "InternalError", orDefault(f.Message, "An internal error has occurred"))
	case FaultUnavailable:
		e.writeError(w, req, http.StatusServiceUnavailable, "Unavailable", orDefault(f.Message, "The server is overloaded and can't handle the request."))
	case FaultAccessDenied:
		code := "AccessDeniedException"
		switch req.service {
		case "ec2":
			code = "UnauthorizedOperation"
		case "iam":
			code = "AccessDenied"
		}
		e.writeError(w, req, http.StatusForbidden, code, orDefault(f.Message,
			"You are not authorized to perform this operation. User: arn:aws:sts::"+e.cfg.AccountID+
				":assumed-role/stowage is not authorized to perform: "+iamAction(req)+" because no identity-based policy allows the action"))
	default:
		return false
	}
	return true
}

var throttleCodes = map[string]string{
	"ec2": "RequestLimitExceeded", "iam": "Throttling", "sqs": "RequestThrottled",
	"ssm": "ThrottlingException", "pricing": "ThrottlingException", "events": "ThrottlingException",
	"sts": "Throttling", "lambda": "TooManyRequestsException", "eks": "ThrottlingException",
	"arc-zonal-shift": "ThrottlingException", "logs": "ThrottlingException",
}

var iamPrefixes = map[string]string{"pricing": "pricing", "events": "events"}

func iamAction(req request) string {
	prefix := req.service
	if p, ok := iamPrefixes[req.service]; ok {
		prefix = p
	}
	action := prefix + ":" + req.action
	return orDefault(iamActionNames[action], action)
}

func (e *Emulator) writeError(w http.ResponseWriter, req request, status int, code, msg string) {
	switch req.service {
	case "ec2":
		writeEC2Error(w, status, code, msg)
	case "iam", "sts":
		writeIAMError(w, status, code, msg)
	case "lambda":
		writeLambdaError(w, status, code, msg)
	default:
		writeJSONError(w, req.service, status, code, msg)
	}
}
