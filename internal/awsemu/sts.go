package awsemu

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"strings"
)

// The credentials the emulator's STS knows from the start: the
// Administrator user's, which tests and the bed sign with.
const (
	DefaultAccessKeyID     = "AKIDEMULATOR"
	DefaultSecretAccessKey = "secret"
	stsAPIVersion          = "2011-06-15"
	stsNamespace           = "https://sts.amazonaws.com/doc/2011-06-15/"
)

// Credential is an access key STS knows, and whom it belongs to.
type Credential struct {
	AccessKeyID, SecretAccessKey string
	// SessionToken is set for temporary credentials (a role session).
	SessionToken string
	// ARN is the caller GetCallerIdentity reports: an IAM user, or an
	// assumed-role session (arn:aws:sts::<account>:assumed-role/<role>/<session>).
	ARN string
	// UserID is the caller's unique id: AIDA... for a user, AROA...:<session>
	// for a role session.
	UserID string
}

type stsState struct {
	creds map[string]Credential // access key id -> credential
}

func newSTSState() stsState {
	return stsState{creds: map[string]Credential{}} // New seeds the Administrator's key
}

// AddCredential makes STS know an access key.
func (e *Emulator) AddCredential(c Credential) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sts.creds[c.AccessKeyID] = c
}

// roleSessionLocked mints temporary credentials for a session of the role
// (an IAM role ARN), as Lambda gives a function its execution role's.
func (e *Emulator) roleSessionLocked(roleARN, session string) Credential {
	role := roleARN[strings.LastIndex(roleARN, "/")+1:]
	id := strings.ToUpper(e.newID("x")[2:])
	c := Credential{AccessKeyID: "ASIA" + id, SecretAccessKey: e.newID("secret"), SessionToken: e.newID("token"),
		ARN: "arn:aws:sts::" + e.cfg.AccountID + ":assumed-role/" + role + "/" + session, UserID: "AROA" + id + ":" + session}
	e.sts.creds[c.AccessKeyID] = c
	return c
}

// callerIdentity is GetCallerIdentity's result.
type callerIdentity struct {
	Arn     string `xml:"Arn" json:"Arn"`
	UserID  string `xml:"UserId" json:"UserId"`
	Account string `xml:"Account" json:"Account"`
}

type getCallerIdentityResponse struct {
	XMLName   xml.Name       `xml:"GetCallerIdentityResponse"`
	Xmlns     string         `xml:"xmlns,attr"`
	Result    callerIdentity `xml:"GetCallerIdentityResult"`
	RequestID string         `xml:"ResponseMetadata>RequestId"`
}

// serveSTS answers GetCallerIdentity, signed in the Authorization header or
// presigned in the query (as an EKS token's URL is replayed), with the
// caller of the verified signature; JSON when the client accepts it, as
// aws-iam-authenticator asks.
func (e *Emulator) serveSTS(w http.ResponseWriter, req request) {
	if h, ok := stsHandlers[req.action]; ok {
		e.serveSTSAction(w, req, h) // sts_webidentity.go
		return
	}
	if req.action != "GetCallerIdentity" {
		writeIAMError(w, http.StatusBadRequest, "InvalidAction", "Could not find operation "+req.action+" for version "+stsAPIVersion)
		return
	}
	caller, apiErr := e.authenticate(req)
	if apiErr != nil {
		writeIAMError(w, stsStatus(apiErr.Code), apiErr.Code, apiErr.Message)
		return
	}
	id := callerIdentity{Arn: caller.ARN, UserID: caller.UserID, Account: e.cfg.AccountID}
	if strings.Contains(req.http.Header.Get("Accept"), "application/json") {
		out, _ := json.Marshal(map[string]any{"GetCallerIdentityResponse": map[string]any{ //nolint:errchkjson // strings
			"GetCallerIdentityResult": id, "ResponseMetadata": map[string]string{"RequestId": "req-emulated"}}})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
		return
	}
	writeXML(w, http.StatusOK, getCallerIdentityResponse{Xmlns: stsNamespace, Result: id, RequestID: "req-emulated"})
}

// authenticate verifies the request's SigV4 signature against the known
// credentials and returns the caller.
func (e *Emulator) authenticate(req request) (Credential, *APIError) {
	sig, apiErr := parseSigV4(req.http)
	if apiErr != nil {
		return Credential{}, apiErr
	}
	e.mu.Lock()
	cred, ok := e.sts.creds[sig.accessKeyID]
	now := e.clk.Now()
	e.mu.Unlock()
	if !ok {
		return Credential{}, &APIError{"InvalidClientTokenId", fmt.Sprintf("The security token included in the request is invalid (access key %s).", sig.accessKeyID)}
	}
	if apiErr := verifySigV4(req.http, req.body, sig, cred, "sts", now); apiErr != nil {
		return Credential{}, apiErr
	}
	return cred, nil
}

func stsStatus(code string) int {
	switch code {
	case "InvalidClientTokenId", "SignatureDoesNotMatch", "ExpiredToken", "MissingAuthenticationToken", "IncompleteSignature":
		return http.StatusForbidden
	}
	return http.StatusBadRequest
}
