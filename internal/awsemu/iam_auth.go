package awsemu

import (
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Authorization is one decision the emulator made for a call: an action on a
// resource, in a request context, for a principal. A call may need several.
type Authorization struct {
	// Principal is the caller's ARN: a role session's
	// (arn:aws:sts::<account>:assumed-role/<role>/<session>) or an IAM
	// user's (arn:aws:iam::<account>:user/<name>).
	Principal string
	// Role is the session's role name; empty for a user.
	Role string
	// User is the user's name; empty for a role session.
	User string
	// Action is the IAM action, e.g. ec2:RunInstances.
	Action string
	// Resource is the ARN the action was authorized on, or "*".
	Resource string
	// Context holds the request's condition keys, in lower case.
	Context map[string][]string
	// Allowed is the decision.
	Allowed bool
	// Decision is the decision as IAM names it: Allowed, ImplicitlyDenied
	// or ExplicitlyDenied.
	Decision string
	// Account is the caller's and the resource's account.
	Account string
	// Identity are the documents of the caller's identity-based policies in
	// force, and ResourcePolicy the resource's own policy ("" when none).
	Identity       []string
	ResourcePolicy string
}

// decisionNames name the decisions as IAM's simulators do.
var decisionNames = map[decision]string{allowed: "Allowed", implicitDeny: "ImplicitlyDenied", explicitDeny: "ExplicitlyDenied"}

// everyAuthorization are told of every decision of every emulator of the
// process (ObserveEveryAuthorization).
var everyAuthorization struct {
	sync.Mutex
	observers []func(Authorization)
}

// ObserveEveryAuthorization registers observe to hear of every decision
// any emulator of the process makes, as OnAuthorize does for one: the tests'
// second evaluator (internal/iamcheck) replays them.
func ObserveEveryAuthorization(observe func(Authorization)) {
	everyAuthorization.Lock()
	defer everyAuthorization.Unlock()
	everyAuthorization.observers = append(everyAuthorization.observers, observe)
}

// OnAuthorize registers observe to hear of every authorization decision, on
// the request's goroutine and outside the emulator's lock, before the call is
// served (or refused). Observers cannot be removed.
func (e *Emulator) OnAuthorize(observe func(Authorization)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.authObservers = append(e.authObservers, observe)
}

// caller is who signed a request.
type caller struct {
	anonymous bool
	arn       string
	role      *iamRole // nil for a user
	user      *iamUser // nil for a role session
	session   string
	region    string // of the signature's credential scope
}

// anonymousActions are the only calls made without credentials.
var anonymousActions = map[string]bool{"sts:AssumeRoleWithWebIdentity": true}

// noAuthorization are the calls IAM policies do not govern: any
// authenticated caller may make them.
var noAuthorization = map[string]bool{"sts:GetCallerIdentity": true}

// authorize authenticates the caller and decides every authorization the call
// needs; on a refusal it writes the service's error and returns false. The
// denials of a fleet's launches do not refuse the call: the fleet reports
// them (req.form.launchDenials, override index -> message).
func (e *Emulator) authorize(w http.ResponseWriter, r *http.Request, req request) bool {
	action := iamAction(req)
	if noAuthorization[action] {
		return true // any caller may; the action authenticates it itself
	}
	c, apiErr := e.callerOf(req, req.service)
	if apiErr != nil {
		e.writeError(w, req, http.StatusForbidden, apiErr.Code, apiErr.Message)
		return false
	}
	if c.anonymous {
		if anonymousActions[action] {
			return true
		}
		e.writeError(w, req, http.StatusForbidden, missingAuthCode(req.service), "Request is missing Authentication Token")
		return false
	}
	reqs, resourcePolicy := e.authRequests(req, action)
	identity := e.identityPolicies(c)
	base := e.baseContext(r, c)
	who := e.subjectOf(c)
	for _, ar := range reqs {
		for k, v := range base {
			if _, ok := ar.context[k]; !ok {
				ar.context[k] = v
			}
		}
	}
	if err := checkReference(reqs); err != nil {
		e.writeError(w, req, http.StatusInternalServerError, "InternalError", "the emulator's authorizer: "+err.Error())
		return false
	}
	for _, ar := range reqs {
		d := decideAll(ar, who, identity, resourcePolicy)
		e.notifyAuthorization(c, ar, d, identity, resourcePolicy)
		if d != allowed && len(ar.launches) > 0 {
			for _, i := range ar.launches {
				if _, ok := req.form.launchDenials[i]; !ok {
					req.form.launchDenials[i] = launchDenial(ar, e.denialMessage(c, ar, d, resourcePolicy))
				}
			}
			continue
		}
		if d != allowed {
			e.writeError(w, req, http.StatusForbidden, accessDeniedCode(req.service), e.denialMessage(c, ar, d, resourcePolicy))
			return false
		}
	}
	return true
}

func (e *Emulator) notifyAuthorization(c caller, ar authRequest, d decision, identity []*policy, resource *policy) {
	e.mu.Lock()
	observers := e.authObservers
	e.mu.Unlock()
	everyAuthorization.Lock()
	observers = append(append([]func(Authorization){}, observers...), everyAuthorization.observers...)
	everyAuthorization.Unlock()
	a := Authorization{Principal: c.arn, Action: ar.action, Resource: ar.resource, Context: ar.context, Allowed: d == allowed,
		Decision: decisionNames[d], Account: e.cfg.AccountID}
	if c.role != nil {
		a.Role = c.role.name
	}
	if c.user != nil {
		a.User = c.user.name
	}
	for _, p := range identity {
		a.Identity = append(a.Identity, p.doc)
	}
	if resource != nil {
		a.ResourcePolicy = resource.doc
	}
	for _, observe := range observers {
		observe(a)
	}
}

// callerOf authenticates a request signed with Signature Version 4, in
// its Authorization header or presigned in its query: with an IAM user's
// access key, or a role session's (issued by AssumeRoleWithWebIdentity, or
// to a Lambda function for its execution role), which must come with its
// session token and be unexpired. Either must sign correctly; a key IAM did
// not issue is refused. The signature's date is not held against the
// emulator's clock, which tests may move.
func (e *Emulator) callerOf(req request, service string) (caller, *APIError) {
	r := req.http
	if r.Header.Get("Authorization") == "" && r.URL.Query().Get("X-Amz-Signature") == "" {
		return caller{anonymous: true}, nil
	}
	sig, apiErr := parseSigV4(r)
	if apiErr != nil {
		return caller{}, apiErr
	}
	c := caller{region: sig.region}
	if u, cred, ok := e.userOf(sig.accessKeyID); ok {
		if apiErr := verifySigV4(r, req.body, sig, cred, sig.service, sig.date); apiErr != nil {
			return c, apiErr
		}
		c.user, c.arn = u, cred.ARN
		return c, nil
	}
	cred, role, expired, known := e.sessionOf(sig.accessKeyID)
	switch {
	case !known:
		return c, invalidCredentials(service, false)
	case cred.SessionToken != sig.token:
		return c, invalidCredentials(service, false)
	case expired:
		return c, invalidCredentials(service, true)
	case role == nil:
		return c, invalidCredentials(service, false) // its role was deleted
	}
	if apiErr := verifySigV4(r, req.body, sig, cred, sig.service, sig.date); apiErr != nil {
		return c, apiErr
	}
	c.role, c.arn = role, cred.ARN
	c.session = cred.ARN[strings.LastIndex(cred.ARN, "/")+1:]
	return c, nil
}

// userOf finds the IAM user an access key belongs to, and the key.
func (e *Emulator) userOf(key string) (*iamUser, Credential, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	u := e.userByKeyLocked(key)
	if u == nil {
		return nil, Credential{}, false
	}
	return u, e.sts.creds[key], true
}

// sessionOf finds a role session by its access key: its credential, its
// role (nil once deleted), and whether it has expired.
func (e *Emulator) sessionOf(key string) (Credential, *iamRole, bool, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	cred, ok := e.sts.creds[key]
	prefix := "arn:aws:sts::" + e.cfg.AccountID + ":assumed-role/"
	if !ok || !strings.HasPrefix(cred.ARN, prefix) {
		return Credential{}, nil, false, false
	}
	name, _, _ := strings.Cut(strings.TrimPrefix(cred.ARN, prefix), "/")
	expired := false
	if s, ok := e.iam.sessions[key]; ok {
		expired = !e.clk.Now().Before(s.expires)
	}
	return cred, e.iam.roles[name], expired, true
}

// invalidCredentials is each protocol's error for credentials it does not
// accept, or accepted once and no longer does.
func invalidCredentials(service string, expired bool) *APIError {
	switch {
	case service == "ec2":
		return &APIError{"AuthFailure", "AWS was not able to validate the provided access credentials"}
	case expired && (service == "iam" || service == "sts" || service == "sqs"):
		return &APIError{"ExpiredToken", "The security token included in the request is expired"}
	case service == "iam" || service == "sts" || service == "sqs":
		return &APIError{"InvalidClientTokenId", "The security token included in the request is invalid."}
	case expired:
		return &APIError{"ExpiredTokenException", "The security token included in the request is expired"}
	}
	return &APIError{"UnrecognizedClientException", "The security token included in the request is invalid."}
}

func missingAuthCode(service string) string {
	if service == "ec2" {
		return "AuthFailure"
	}
	return "MissingAuthenticationTokenException"
}

func accessDeniedCode(service string) string {
	switch service {
	case "ec2":
		return "UnauthorizedOperation"
	case "iam", "sts", "sqs":
		return "AccessDenied"
	}
	return "AccessDeniedException"
}

// identityPolicies are the caller's identity-based policies: its role's or
// its user's inline and attached policies.
func (e *Emulator) identityPolicies(c caller) []*policy {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c.user != nil {
		return e.userPoliciesLocked(c.user)
	}
	return e.identityPoliciesLocked(c.role)
}

func (e *Emulator) subjectOf(c caller) *subject {
	s := &subject{account: e.cfg.AccountID, arns: []string{c.arn}}
	if c.role != nil {
		s.arns = append(s.arns, e.roleARN(c.role))
	}
	return s
}

// baseContext holds the global condition keys every request carries.
func (e *Emulator) baseContext(r *http.Request, c caller) map[string][]string {
	now := e.clk.Now()
	ctx := map[string][]string{
		"aws:requestedregion":       {c.region},
		"aws:securetransport":       {strconv.FormatBool(r.TLS != nil)},
		"aws:principalarn":          {c.arn},
		"aws:principalaccount":      {e.cfg.AccountID},
		"aws:principaltype":         {"User"},
		"aws:currenttime":           {now.UTC().Format(time.RFC3339)},
		"aws:epochtime":             {strconv.FormatInt(now.Unix(), 10)},
		"aws:principalisawsservice": {"false"},
	}
	if c.role != nil {
		ctx["aws:principalarn"] = []string{e.roleARN(c.role)}
		ctx["aws:principaltype"] = []string{"AssumedRole"}
		ctx["aws:userid"] = []string{c.role.id + ":" + c.session}
	}
	if c.user != nil {
		ctx["aws:userid"] = []string{c.user.id}
		ctx["aws:username"] = []string{c.user.name}
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		ctx["aws:sourceip"] = []string{host}
	}
	return ctx
}

// denialMessage says who may not do what, as AWS words it; EC2 appends an
// encoded authorization message (base64 JSON of the request's context).
func (e *Emulator) denialMessage(c caller, ar authRequest, d decision, resourcePolicy *policy) string {
	why := "because no identity-based policy allows the " + ar.action + " action"
	if d == explicitDeny {
		why = "with an explicit deny in an identity-based policy"
		if resourcePolicy != nil && resourcePolicy.decide(ar, e.subjectOf(c)) == explicitDeny {
			why = "with an explicit deny in a resource-based policy"
		}
	}
	msg := "User: " + c.arn + " is not authorized to perform: " + ar.action + " on resource: " + ar.resource + " " + why
	if strings.HasPrefix(ar.action, "ec2:") {
		detail, _ := json.Marshal(map[string]any{"allowed": false, "action": ar.action, "resource": ar.resource, "context": ar.context}) //nolint:errchkjson // plain data
		msg = "You are not authorized to perform this operation. " + msg + ". Encoded authorization failure message: " +
			base64.StdEncoding.EncodeToString(detail)
	}
	return msg
}
