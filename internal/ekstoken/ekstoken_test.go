package ekstoken_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/internal/ekstoken"
)

func source(clk *clocktesting.FakeClock) *ekstoken.Source {
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")}
	return ekstoken.New(cfg, "prod", clk, func(o *sts.Options) { o.BaseEndpoint = aws.String("https://sts.example.test") })
}

func TestTokenIsAPresignedGetCallerIdentityForTheCluster(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC))
	tok, err := source(clk).Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok.Value, ekstoken.Prefix) || strings.ContainsAny(tok.Value, "=+/") {
		t.Fatalf("token %q is not k8s-aws-v1. + unpadded base64url", tok.Value)
	}
	if want := clk.Now().Add(ekstoken.Lifetime); !tok.Expiration.Equal(want) {
		t.Errorf("expiration = %v, want %v", tok.Expiration, want)
	}
	raw, err := ekstoken.DecodeURL(tok.Value)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	for k, want := range map[string]string{"Action": "GetCallerIdentity", "X-Amz-Expires": "60", "X-Amz-Algorithm": "AWS4-HMAC-SHA256"} {
		if q.Get(k) != want {
			t.Errorf("%s = %q, want %q (url %s)", k, q.Get(k), want, raw)
		}
	}
	if !strings.Contains(q.Get("X-Amz-SignedHeaders"), ekstoken.ClusterIDHeader) {
		t.Errorf("signed headers %q do not cover %s", q.Get("X-Amz-SignedHeaders"), ekstoken.ClusterIDHeader)
	}
	if !strings.HasPrefix(q.Get("X-Amz-Credential"), "AKIDEXAMPLE/") {
		t.Errorf("credential %q is not the caller's", q.Get("X-Amz-Credential"))
	}
}

func TestTokenIsCachedUntilTwoMinutesBeforeItLapses(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC))
	src := source(clk)
	first, _ := src.Token(context.Background())
	clk.Step(12*time.Minute + 59*time.Second)
	if again, _ := src.Token(context.Background()); again != first {
		t.Fatal("a token with more than two minutes left was minted again")
	}
	clk.Step(time.Second)
	next, _ := src.Token(context.Background())
	// The SDK signs with the wall clock, so only the expiration shows the new mint.
	if !next.Expiration.After(first.Expiration) {
		t.Fatal("a token with two minutes left was not replaced")
	}
}

func TestTransportSetsTheBearerToken(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = r.Header.Get("Authorization") }))
	defer srv.Close()
	src := source(clocktesting.NewFakeClock(time.Now()))
	client := &http.Client{Transport: src.Transport(http.DefaultTransport)}
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	tok, _ := src.Token(context.Background())
	if got != "Bearer "+tok.Value {
		t.Fatalf("Authorization = %q, want the bearer token", got)
	}
}

func TestDecodeURLRejectsForeignTokens(t *testing.T) {
	for _, tok := range []string{"", "k8s-aws-v1.", "Bearer abc", "k8s-aws-v1.***"} {
		if _, err := ekstoken.DecodeURL(tok); err == nil {
			t.Errorf("DecodeURL(%q) accepted a malformed token", tok)
		}
	}
}
