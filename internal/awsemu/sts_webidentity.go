package awsemu

import (
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// oidcProvider is an IAM OpenID Connect identity provider: the issuer whose
// tokens AssumeRoleWithWebIdentity accepts (an EKS cluster's, for IRSA).
type oidcProvider struct {
	url       string // the issuer without https://, as condition keys name it
	arn       string
	audiences []string
	keys      jose.JSONWebKeySet
}

// roleSession is a role's temporary credentials, as STS issues them.
type roleSession struct {
	role, name    string
	secret, token string
	expires       time.Time
}

// Credentials are temporary security credentials of a role session.
type Credentials struct {
	AccessKeyID, SecretAccessKey, SessionToken string
	Expires                                    time.Time
}

// AddOIDCProvider registers an OIDC identity provider for issuer (an https
// URL) that trusts the keys of jwks, a JSON Web Key Set as the issuer serves
// it, and tokens for the audiences (sts.amazonaws.com when none). It returns
// the provider's ARN.
func (e *Emulator) AddOIDCProvider(issuer string, jwks []byte, audiences ...string) (string, error) {
	var keys jose.JSONWebKeySet
	if err := json.Unmarshal(jwks, &keys); err != nil {
		return "", fmt.Errorf("reading the issuer's JSON Web Key Set: %w", err)
	}
	if len(audiences) == 0 {
		audiences = []string{"sts.amazonaws.com"}
	}
	u := strings.TrimPrefix(issuer, "https://")
	e.mu.Lock()
	defer e.mu.Unlock()
	p := &oidcProvider{url: u, arn: "arn:aws:iam::" + e.cfg.AccountID + ":oidc-provider/" + u, audiences: audiences, keys: keys}
	e.iam.oidc[u] = p
	return p.arn, nil
}

// RoleCredentials issues credentials of a role's session in process, as if
// its trust policy allowed the caller: for tests that act as a role without
// a web identity.
func (e *Emulator) RoleCredentials(role, session string) (Credentials, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.iam.roles[role] == nil {
		return Credentials{}, fmt.Errorf("no role %s", role)
	}
	return e.issueLocked(role, session, time.Hour), nil
}

func (e *Emulator) issueLocked(role, session string, d time.Duration) Credentials {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	key := []byte("ASIA")
	for range 16 {
		key = append(key, alnum[e.rnd.Intn(len(alnum))])
	}
	secret, token := make([]byte, 30), make([]byte, 96)
	e.rnd.Read(secret)
	e.rnd.Read(token)
	c := Credentials{AccessKeyID: string(key), SecretAccessKey: base64.StdEncoding.EncodeToString(secret),
		SessionToken: base64.StdEncoding.EncodeToString(token), Expires: e.clk.Now().Add(d)}
	e.iam.sessions[c.AccessKeyID] = &roleSession{role: role, name: session, secret: c.SecretAccessKey, token: c.SessionToken, expires: c.Expires}
	// STS knows it too: GetCallerIdentity (an EKS token) and signatures are checked against it.
	e.sts.creds[c.AccessKeyID] = Credential{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, SessionToken: c.SessionToken,
		ARN: e.sessionARN(role, session), UserID: e.iam.roles[role].id + ":" + session}
	return c
}

// stsHandlers answer the STS actions beyond GetCallerIdentity, one line each.
var stsHandlers = map[string]func(e *Emulator, p params) (any, *APIError){
	"AssumeRoleWithWebIdentity": (*Emulator).assumeRoleWithWebIdentity,
}

func (e *Emulator) serveSTSAction(w http.ResponseWriter, req request, h func(e *Emulator, p params) (any, *APIError)) {
	out, apiErr := h(e, req.form)
	if apiErr != nil {
		status := stsStatus(apiErr.Code)
		if apiErr.Code == "AccessDenied" {
			status = http.StatusForbidden
		}
		writeIAMError(w, status, apiErr.Code, apiErr.Message)
		return
	}
	writeXML(w, http.StatusOK, iamResponse{XMLName: xml.Name{Local: req.action + "Response"},
		Xmlns: stsNamespace, Result: out, RequestID: "req-emulated"})
}

type xmlCredentials struct {
	AccessKeyID string `xml:"AccessKeyId"`
	Secret      string `xml:"SecretAccessKey"`
	Token       string `xml:"SessionToken"`
	Expiration  string `xml:"Expiration"`
}

type webIdentityResult struct {
	XMLName     xml.Name       `xml:"AssumeRoleWithWebIdentityResult"`
	Subject     string         `xml:"SubjectFromWebIdentityToken"`
	Audience    string         `xml:"Audience"`
	Provider    string         `xml:"Provider"`
	UserArn     string         `xml:"AssumedRoleUser>Arn"`
	UserID      string         `xml:"AssumedRoleUser>AssumedRoleId"`
	Credentials xmlCredentials `xml:"Credentials"`
}

// assumeRoleWithWebIdentity checks the token against the OIDC provider of its
// issuer (signature, expiry, audience), then the role's trust policy with the
// provider as the federated principal and the token's sub and aud as
// <issuer>:sub and <issuer>:aud, and issues the session's credentials.
func (e *Emulator) assumeRoleWithWebIdentity(p params) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	prov, claims, apiErr := e.verifyWebIdentityLocked(p.str("WebIdentityToken"))
	if apiErr != nil {
		return nil, apiErr
	}
	roleARN, session := p.str("RoleArn"), p.str("RoleSessionName")
	r := e.roleByARNLocked(roleARN)
	if session == "" || !roleNamePattern.MatchString(session) {
		return nil, &APIError{"ValidationError", "RoleSessionName must be 2 to 64 characters of A-Z, a-z, 0-9 and +=,.@-"}
	}
	ctx := map[string][]string{prov.url + ":sub": {claims.Subject}, prov.url + ":aud": claims.Audience,
		"aws:federatedprovider": {prov.arn}}
	for k, v := range ctx {
		delete(ctx, k)
		ctx[strings.ToLower(k)] = v
	}
	req := authRequest{action: "sts:AssumeRoleWithWebIdentity", resource: roleARN, context: ctx}
	if r == nil || r.trust.decide(req, &subject{federated: []string{prov.arn}}) != allowed {
		return nil, &APIError{"AccessDenied", "Not authorized to perform sts:AssumeRoleWithWebIdentity"}
	}
	d := time.Duration(p.integer("DurationSeconds", 3600)) * time.Second
	if d < 15*time.Minute || d > time.Duration(r.maxSession)*time.Second {
		return nil, &APIError{"ValidationError", fmt.Sprintf("DurationSeconds must be between 900 and the role's MaxSessionDuration, %d", r.maxSession)}
	}
	c := e.issueLocked(r.name, session, d)
	return webIdentityResult{Subject: claims.Subject, Audience: claims.Audience[0], Provider: prov.arn,
		UserArn: e.sessionARN(r.name, session), UserID: r.id + ":" + session,
		Credentials: xmlCredentials{c.AccessKeyID, c.SecretAccessKey, c.SessionToken, isoTime(c.Expires)}}, nil
}

func (e *Emulator) sessionARN(role, session string) string {
	return "arn:aws:sts::" + e.cfg.AccountID + ":assumed-role/" + role + "/" + session
}

func (e *Emulator) roleByARNLocked(arn string) *iamRole {
	for _, r := range e.iam.roles {
		if e.roleARN(r) == arn {
			return r
		}
	}
	return nil
}

// verifyWebIdentityLocked checks a JWT as STS does: an issuer with an OIDC
// provider in the account, a signature by one of its keys, a time within the
// token's validity, and an audience the provider lists.
func (e *Emulator) verifyWebIdentityLocked(raw string) (*oidcProvider, *jwt.Claims, *APIError) {
	invalid := func(msg string) (*oidcProvider, *jwt.Claims, *APIError) {
		return nil, nil, &APIError{"InvalidIdentityToken", msg}
	}
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.ES384, jose.RS512})
	if err != nil {
		return invalid("The web identity token is not a signed JWT: " + err.Error())
	}
	var unverified jwt.Claims
	if err := tok.UnsafeClaimsWithoutVerification(&unverified); err != nil {
		return invalid("Reading the token's claims: " + err.Error())
	}
	prov := e.iam.oidc[strings.TrimPrefix(unverified.Issuer, "https://")]
	if prov == nil {
		return invalid("No OpenIDConnect provider found in your account for " + unverified.Issuer)
	}
	var claims jwt.Claims
	if err := tok.Claims(prov.keys, &claims); err != nil {
		return invalid("The token's signature is not one of the provider's keys: " + err.Error())
	}
	if err := claims.ValidateWithLeeway(jwt.Expected{Time: e.clk.Now()}, time.Minute); err != nil {
		if errors.Is(err, jwt.ErrExpired) {
			return nil, nil, &APIError{"ExpiredTokenException", "Token expired"}
		}
		return invalid("Token is not valid: " + err.Error())
	}
	for _, a := range claims.Audience {
		if contains(prov.audiences, a) {
			return prov, &claims, nil
		}
	}
	return invalid("Incorrect token audience")
}
