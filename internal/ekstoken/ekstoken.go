// Package ekstoken mints the bearer token EKS accepts from an IAM identity, as
// aws-iam-authenticator and `aws eks get-token` do: "k8s-aws-v1." followed by
// the unpadded base64url encoding of a presigned STS GetCallerIdentity URL whose
// signature covers the x-k8s-aws-id header (the cluster's name). The API server
// (through its authenticator) replays the URL to learn who signed it.
//
// The Lambda and the Terraform provider both reach a cluster this way; this is
// their one implementation.
package ekstoken

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"k8s.io/utils/clock"
)

const (
	// Prefix starts every token.
	Prefix = "k8s-aws-v1."
	// ClusterIDHeader carries the cluster name inside the signature.
	ClusterIDHeader = "x-k8s-aws-id"
	// presignSeconds is the URL's X-Amz-Expires; EKS accepts a token for 15
	// minutes after signing whatever this says, and aws-iam-authenticator signs 60.
	presignSeconds = "60"
	// Lifetime is how long EKS accepts a token after it was signed.
	Lifetime = 15 * time.Minute
	// refreshBefore is how long before Lifetime runs out a new token is minted,
	// so that a request never leaves with a token about to lapse.
	refreshBefore = 2 * time.Minute
)

// Token is a bearer token and the time EKS stops accepting it.
type Token struct {
	Value      string
	Expiration time.Time
}

// Source mints tokens for one cluster and caches the current one.
type Source struct {
	presigner *sts.PresignClient
	cluster   string
	clk       clock.PassiveClock

	mu  sync.Mutex
	cur Token
}

// New returns a Source that signs with cfg's credentials for the named cluster.
// Options for the STS client (a BaseEndpoint for an emulator) may follow.
func New(cfg aws.Config, cluster string, clk clock.PassiveClock, opts ...func(*sts.Options)) *Source {
	return &Source{presigner: sts.NewPresignClient(sts.NewFromConfig(cfg, opts...)), cluster: cluster, clk: clk}
}

// Token returns the cached token, or mints a new one when the cached one has
// less than two minutes left.
func (s *Source) Token(ctx context.Context) (Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clk.Now()
	if s.cur.Value != "" && now.Before(s.cur.Expiration.Add(-refreshBefore)) {
		return s.cur, nil
	}
	req, err := s.presigner.PresignGetCallerIdentity(ctx, &sts.GetCallerIdentityInput{}, func(o *sts.PresignOptions) {
		o.ClientOptions = append(o.ClientOptions, func(o *sts.Options) {
			o.APIOptions = append(o.APIOptions,
				smithyhttp.AddHeaderValue(ClusterIDHeader, s.cluster),
				smithyhttp.SetHeaderValue("X-Amz-Expires", presignSeconds))
		})
	})
	if err != nil {
		return Token{}, fmt.Errorf("presigning sts:GetCallerIdentity for cluster %s: %w", s.cluster, err)
	}
	s.cur = Token{Value: Prefix + base64.RawURLEncoding.EncodeToString([]byte(req.URL)), Expiration: now.Add(Lifetime)}
	return s.cur, nil
}

// Transport returns an http.RoundTripper that sets each request's bearer token
// from the Source (a rest.Config's WrapTransport).
func (s *Source) Transport(next http.RoundTripper) http.RoundTripper {
	return roundTripper{src: s, next: next}
}

type roundTripper struct {
	src  *Source
	next http.RoundTripper
}

func (rt roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	tok, err := rt.src.Token(req.Context())
	if err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+tok.Value)
	return rt.next.RoundTrip(req)
}

// DecodeURL returns the presigned URL inside a token, for an authenticator (or
// a test's token webhook) to replay; the error says what is wrong with the token.
func DecodeURL(token string) (string, error) {
	if len(token) <= len(Prefix) || token[:len(Prefix)] != Prefix {
		return "", fmt.Errorf("token does not start with %q", Prefix)
	}
	b, err := base64.RawURLEncoding.DecodeString(token[len(Prefix):])
	if err != nil {
		return "", fmt.Errorf("decoding the token's presigned URL: %w", err)
	}
	return string(b), nil
}
