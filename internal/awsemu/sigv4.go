package awsemu

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Signature Version 4, as AWS verifies it: from the Authorization header,
// or from the query of a presigned URL.
const (
	sigV4Algorithm = "AWS4-HMAC-SHA256"
	amzDateLayout  = "20060102T150405Z"
	// presignedLifetime is how long a presigned GetCallerIdentity stays
	// valid whatever its X-Amz-Expires says: EKS tokens rely on 15 minutes.
	presignedLifetime = 15 * time.Minute
	// clockSkew is how far a header-signed request's date may be from now.
	clockSkew = 15 * time.Minute
)

// sigV4 is a request's signature and what it claims.
type sigV4 struct {
	accessKeyID, scopeDate, region, service string
	signedHeaders                           []string
	signature, token                        string
	date                                    time.Time
	presigned                               bool
}

// parseSigV4 reads the signature of r; the error is the code AWS answers.
func parseSigV4(r *http.Request) (sigV4, *APIError) {
	q := r.URL.Query()
	if q.Get("X-Amz-Signature") != "" {
		return parseSigV4Fields(q.Get("X-Amz-Algorithm"), q.Get("X-Amz-Credential"), q.Get("X-Amz-SignedHeaders"),
			q.Get("X-Amz-Signature"), q.Get("X-Amz-Date"), q.Get("X-Amz-Security-Token"), true)
	}
	auth := r.Header.Get("Authorization")
	alg, rest, _ := strings.Cut(auth, " ")
	fields := map[string]string{}
	for _, part := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		fields[k] = v
	}
	return parseSigV4Fields(alg, fields["Credential"], fields["SignedHeaders"], fields["Signature"],
		r.Header.Get("X-Amz-Date"), r.Header.Get("X-Amz-Security-Token"), false)
}

func parseSigV4Fields(alg, credential, signedHeaders, signature, date, token string, presigned bool) (sigV4, *APIError) {
	if alg == "" && signature == "" {
		return sigV4{}, &APIError{"MissingAuthenticationToken", "Request is missing Authentication Token"}
	}
	scope := strings.Split(credential, "/")
	if alg != sigV4Algorithm || len(scope) != 5 || scope[4] != "aws4_request" || signedHeaders == "" || signature == "" {
		return sigV4{}, &APIError{"IncompleteSignature", "The request signature does not conform to AWS standards."}
	}
	t, err := time.Parse(amzDateLayout, date)
	if err != nil || t.Format("20060102") != scope[1] {
		return sigV4{}, &APIError{"IncompleteSignature", "X-Amz-Date is missing, malformed, or not the credential scope's date."}
	}
	return sigV4{accessKeyID: scope[0], scopeDate: scope[1], region: scope[2], service: scope[3],
		signedHeaders: strings.Split(signedHeaders, ";"), signature: signature, token: token, date: t, presigned: presigned}, nil
}

// verifySigV4 checks r's signature with the credential's secret, the
// service, the date, and (for temporary credentials) the session token.
func verifySigV4(r *http.Request, body []byte, sig sigV4, cred Credential, service string, now time.Time) *APIError {
	if sig.service != service {
		return &APIError{"SignatureDoesNotMatch", "Credential should be scoped to correct service: '" + service + "'."}
	}
	if cred.SessionToken != sig.token {
		return &APIError{"InvalidClientTokenId", "The security token included in the request is invalid."}
	}
	if sig.presigned && (now.After(sig.date.Add(presignedLifetime)) || sig.date.After(now.Add(clockSkew))) {
		return &APIError{"ExpiredToken", "The presigned request has expired."}
	}
	if !sig.presigned && (now.Sub(sig.date) > clockSkew || sig.date.Sub(now) > clockSkew) {
		return &APIError{"SignatureDoesNotMatch", "Signature expired: the request's date is more than 15 minutes from now."}
	}
	if !slices.Contains(sig.signedHeaders, "host") {
		return &APIError{"SignatureDoesNotMatch", "The host header must be signed."}
	}
	canonical := canonicalRequest(r, body, sig)
	scope := strings.Join([]string{sig.scopeDate, sig.region, sig.service, "aws4_request"}, "/")
	toSign := strings.Join([]string{sigV4Algorithm, sig.date.Format(amzDateLayout), scope, hexSHA256([]byte(canonical))}, "\n")
	key := hmacSHA256([]byte("AWS4"+cred.SecretAccessKey), sig.scopeDate)
	for _, part := range []string{sig.region, sig.service, "aws4_request"} {
		key = hmacSHA256(key, part)
	}
	want := hex.EncodeToString(hmacSHA256(key, toSign))
	if !hmac.Equal([]byte(want), []byte(sig.signature)) {
		return &APIError{"SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided."}
	}
	return nil
}

// canonicalRequest is SigV4's canonical form of r.
func canonicalRequest(r *http.Request, body []byte, sig sigV4) string {
	// Every service but S3 signs its path encoded twice: the escaped path's
	// segments encoded once more.
	segments := strings.Split(r.URL.EscapedPath(), "/")
	for i, seg := range segments {
		segments[i] = rfc3986(seg)
	}
	path := strings.Join(segments, "/")
	if path == "" {
		path = "/"
	}
	headers := make([]string, 0, len(sig.signedHeaders))
	for _, h := range sig.signedHeaders {
		value := strings.Join(r.Header.Values(h), ",")
		switch { // a client's request handed over in process keeps these outside its headers
		case h == "host":
			value = orDefault(r.Host, r.URL.Host)
		case h == "content-length" && value == "" && r.ContentLength >= 0:
			value = strconv.FormatInt(r.ContentLength, 10)
		}
		headers = append(headers, h+":"+strings.Join(strings.Fields(value), " ")+"\n")
	}
	payload := r.Header.Get("X-Amz-Content-Sha256")
	if payload == "" {
		payload = r.URL.Query().Get("X-Amz-Content-Sha256")
	}
	if payload == "" {
		payload = hexSHA256(body)
	}
	return strings.Join([]string{r.Method, path, canonicalQuery(r.URL.Query()), strings.Join(headers, ""),
		strings.Join(sig.signedHeaders, ";"), payload}, "\n")
}

// canonicalQuery encodes every parameter but the signature, RFC 3986
// escaped, sorted by key and value.
func canonicalQuery(q url.Values) string {
	type pair struct{ k, v string }
	var pairs []pair
	for k, vs := range q {
		if k == "X-Amz-Signature" {
			continue
		}
		for _, v := range vs {
			pairs = append(pairs, pair{rfc3986(k), rfc3986(v)})
		}
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		if c := strings.Compare(a.k, b.k); c != 0 {
			return c
		}
		return strings.Compare(a.v, b.v)
	})
	out := make([]string, 0, len(pairs))
	for _, p := range pairs {
		out = append(out, p.k+"="+p.v)
	}
	return strings.Join(out, "&")
}

func rfc3986(s string) string { return strings.ReplaceAll(url.QueryEscape(s), "+", "%20") }

func hexSHA256(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}
