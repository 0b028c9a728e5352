package testbed

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/clock"

	"github.com/stowage-dev/stowage/internal/ekstoken"
)

// tokenMaxAge is how long after signing an EKS token is accepted.
const tokenMaxAge = 15 * time.Minute

// presignedParams are the only query parameters an EKS token's URL may
// carry (as aws-iam-authenticator allows them).
var presignedParams = []string{"action", "version", "x-amz-algorithm", "x-amz-credential", "x-amz-date",
	"x-amz-expires", "x-amz-security-token", "x-amz-signature", "x-amz-signedheaders"}

// RoleMapping is the Kubernetes user an IAM role's sessions authenticate as.
type RoleMapping struct {
	// Username may hold {{SessionName}}, replaced by the session's name.
	Username string
	Groups   []string
}

// TokenWebhook is the bed's stand-in for aws-iam-authenticator on EKS: a
// kube-apiserver token webhook that takes "k8s-aws-v1." tokens, checks the
// presigned STS GetCallerIdentity URL inside, replays it against the AWS
// emulator's STS with the cluster's x-k8s-aws-id header, and maps the IAM
// role that signed it to a Kubernetes user. Tokens it cannot verify are not
// authenticated.
type TokenWebhook struct {
	// ConfigFile is the kubeconfig kube-apiserver reads the webhook from.
	ConfigFile string

	srv     *httptest.Server
	cluster string
	clk     clock.PassiveClock
	client  *http.Client

	mu      sync.Mutex
	sts     *url.URL               // the emulator's STS endpoint
	roles   map[string]RoleMapping // IAM role ARN -> user
	entries func(roleARN string) (RoleMapping, bool)
}

// StartTokenWebhook serves the webhook on loopback over TLS and writes its
// kubeconfig into dir. SetSTS must be called before tokens can be verified.
func StartTokenWebhook(dir, cluster string, clk clock.PassiveClock) (*TokenWebhook, error) {
	w := &TokenWebhook{cluster: cluster, clk: clk, roles: map[string]RoleMapping{},
		client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil}}}
	f, err := os.CreateTemp(dir, "token-webhook-*.kubeconfig")
	if err != nil {
		return nil, fmt.Errorf("creating the token webhook's kubeconfig: %w", err)
	}
	w.ConfigFile = f.Name()
	if err := f.Close(); err != nil {
		return nil, err
	}
	w.srv = httptest.NewTLSServer(http.HandlerFunc(w.serve))
	kc := clientcmdapi.NewConfig()
	kc.Clusters["token-webhook"] = &clientcmdapi.Cluster{Server: w.srv.URL + "/authenticate",
		CertificateAuthorityData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: w.srv.Certificate().Raw})}
	kc.AuthInfos["kube-apiserver"] = &clientcmdapi.AuthInfo{}
	kc.Contexts["webhook"] = &clientcmdapi.Context{Cluster: "token-webhook", AuthInfo: "kube-apiserver"}
	kc.CurrentContext = "webhook"
	if err := clientcmd.WriteToFile(*kc, w.ConfigFile); err != nil {
		w.srv.Close()
		return nil, fmt.Errorf("writing the token webhook's kubeconfig: %w", err)
	}
	return w, nil
}

// Flags are the kube-apiserver flags that use the webhook.
func (w *TokenWebhook) Flags() []string {
	return []string{"--authentication-token-webhook-config-file=" + w.ConfigFile,
		"--authentication-token-webhook-version=v1", "--authentication-token-webhook-cache-ttl=30s"}
}

// SetSTS sets the STS endpoint tokens must be signed for and are replayed to.
func (w *TokenWebhook) SetSTS(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil {
		return fmt.Errorf("parsing the STS endpoint %s: %w", endpoint, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sts = u
	return nil
}

// MapRole maps the sessions of an IAM role (arn:aws:iam::<account>:role/<name>)
// to a Kubernetes user, as an aws-auth mapRoles entry or an access entry does.
func (w *TokenWebhook) MapRole(roleARN string, m RoleMapping) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.roles[roleARN] = m
}

// UseAccessEntries maps the roles MapRole does not through entries (the
// emulator's EKS access entries of the cluster).
func (w *TokenWebhook) UseAccessEntries(entries func(roleARN string) (RoleMapping, bool)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.entries = entries
}

// Close stops the webhook.
func (w *TokenWebhook) Close() error {
	w.srv.Close()
	return os.Remove(w.ConfigFile)
}

func (w *TokenWebhook) serve(rw http.ResponseWriter, r *http.Request) {
	var review authnv1.TokenReview
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&review); err != nil {
		http.Error(rw, "reading the TokenReview: "+err.Error(), http.StatusBadRequest)
		return
	}
	review.Status = authnv1.TokenReviewStatus{}
	if user, err := w.authenticate(r.Context(), review.Spec.Token); err != nil {
		review.Status.Error = err.Error()
	} else {
		review.Status.Authenticated, review.Status.User = true, user
	}
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(review)
}

// authenticate verifies an EKS token and returns its user.
func (w *TokenWebhook) authenticate(ctx context.Context, token string) (authnv1.UserInfo, error) {
	raw, err := ekstoken.DecodeURL(token)
	if err != nil {
		return authnv1.UserInfo{}, err
	}
	if err := w.checkURL(raw); err != nil {
		return authnv1.UserInfo{}, err
	}
	caller, err := w.callerOf(ctx, raw)
	if err != nil {
		return authnv1.UserInfo{}, err
	}
	role, session := canonicalARN(caller.Arn)
	w.mu.Lock()
	m, ok := w.roles[role]
	entries := w.entries
	w.mu.Unlock()
	if !ok && entries != nil {
		m, ok = entries(role) // the cluster's EKS access entries, as EKS consults them
	}
	if !ok {
		return authnv1.UserInfo{}, fmt.Errorf("ARN %s is not mapped", role)
	}
	return authnv1.UserInfo{Username: strings.ReplaceAll(m.Username, "{{SessionName}}", session),
		UID: "aws-iam-authenticator:" + caller.Account + ":" + caller.UserID, Groups: m.Groups,
		Extra: map[string]authnv1.ExtraValue{"arn": {caller.Arn}, "canonicalArn": {role}}}, nil
}

// checkURL refuses a URL that is not a fresh presigned GetCallerIdentity
// for the emulator's STS covering the cluster header.
func (w *TokenWebhook) checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("the token's URL does not parse: %w", err)
	}
	w.mu.Lock()
	sts := w.sts
	w.mu.Unlock()
	if sts == nil || u.Scheme != sts.Scheme || u.Host != sts.Host || (u.Path != "/" && u.Path != "") {
		return fmt.Errorf("the token is not signed for this cluster's STS endpoint")
	}
	q := u.Query()
	for k := range q {
		if !slices.Contains(presignedParams, strings.ToLower(k)) {
			return fmt.Errorf("the token's URL has the unexpected parameter %q", k)
		}
	}
	if q.Get("Action") != "GetCallerIdentity" {
		return fmt.Errorf("the token's URL is not a GetCallerIdentity call")
	}
	if !slices.Contains(strings.Split(q.Get("X-Amz-SignedHeaders"), ";"), ekstoken.ClusterIDHeader) {
		return fmt.Errorf("the token's signature does not cover %s", ekstoken.ClusterIDHeader)
	}
	signed, err := time.Parse("20060102T150405Z", q.Get("X-Amz-Date"))
	if now := w.clk.Now(); err != nil || now.Sub(signed) > tokenMaxAge || signed.Sub(now) > tokenMaxAge {
		return fmt.Errorf("the token has expired or carries no valid X-Amz-Date")
	}
	return nil
}

type stsCaller struct {
	Arn, Account string
	UserID       string `json:"UserId"`
}

// callerOf replays the URL, with the cluster's id, to learn who signed it.
func (w *TokenWebhook) callerOf(ctx context.Context, raw string) (stsCaller, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return stsCaller{}, err
	}
	req.Header.Set(ekstoken.ClusterIDHeader, w.cluster)
	req.Header.Set("Accept", "application/json")
	resp, err := w.client.Do(req)
	if err != nil {
		return stsCaller{}, fmt.Errorf("calling STS: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return stsCaller{}, fmt.Errorf("STS refused the token: %s %s", resp.Status, body)
	}
	var doc struct {
		GetCallerIdentityResponse struct{ GetCallerIdentityResult stsCaller }
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return stsCaller{}, fmt.Errorf("reading STS's answer: %w", err)
	}
	return doc.GetCallerIdentityResponse.GetCallerIdentityResult, nil
}

var assumedRole = regexp.MustCompile(`^arn:aws:sts::(\d{12}):assumed-role/([^/]+)/(.+)$`)

// canonicalARN turns an assumed-role session's ARN into its role's, and
// returns the session name; other ARNs are returned as they are.
func canonicalARN(arn string) (string, string) {
	m := assumedRole.FindStringSubmatch(arn)
	if m == nil {
		return arn, ""
	}
	return "arn:aws:iam::" + m[1] + ":role/" + m[2], m[3]
}
