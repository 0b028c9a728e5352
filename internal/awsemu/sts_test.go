package awsemu_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/ekstoken"
)

// TestGetCallerIdentityVerifiesTheSignature: the SDK's signed call returns
// the caller of the known key; a wrong secret, an unknown key or a missing
// session token are refused as STS refuses them.
func TestGetCallerIdentityVerifiesTheSignature(t *testing.T) {
	e := awsemu.New(awsemu.DefaultConfig())
	cfg := client(t, e)
	ctx := context.Background()
	out, err := sts.NewFromConfig(cfg).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil || awssdk.ToString(out.Arn) != "arn:aws:iam::123456789012:user/administrator" || awssdk.ToString(out.Account) != "123456789012" {
		t.Fatalf("GetCallerIdentity: %+v, %v; want the emulator's user", out, err)
	}
	e.AddCredential(awsemu.Credential{AccessKeyID: "ASIAROLE", SecretAccessKey: "s3cr3t", SessionToken: "tok",
		ARN: "arn:aws:sts::123456789012:assumed-role/lambda/fn", UserID: "AROAROLE:fn"})
	for _, tc := range []struct {
		name, key, secret, token, want string
	}{
		{"a role session", "ASIAROLE", "s3cr3t", "tok", ""},
		{"a wrong secret", awsemu.DefaultAccessKeyID, "guess", "", "SignatureDoesNotMatch"},
		{"an unknown key", "AKIDUNKNOWN", "secret", "", "InvalidClientTokenId"},
		{"no session token", "ASIAROLE", "s3cr3t", "", "InvalidClientTokenId"},
	} {
		c := cfg.Copy()
		c.Credentials = credentials.NewStaticCredentialsProvider(tc.key, tc.secret, tc.token)
		out, err := sts.NewFromConfig(c).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
		if got := code(err); got != tc.want {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
		if tc.want == "" && awssdk.ToString(out.Arn) != "arn:aws:sts::123456789012:assumed-role/lambda/fn" {
			t.Errorf("%s: caller %v", tc.name, awssdk.ToString(out.Arn))
		}
	}
}

// TestPresignedGetCallerIdentityAnswersAnEKSToken replays the URL of an EKS
// token as aws-iam-authenticator does: with the cluster's x-k8s-aws-id
// header it answers the signer's identity (JSON when asked); for another
// cluster, a changed query, or after 15 minutes it refuses.
func TestPresignedGetCallerIdentityAnswersAnEKSToken(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	ecfg := awsemu.DefaultConfig()
	ecfg.Clock = clk
	e := awsemu.New(ecfg)
	cfg := client(t, e)
	tok, err := ekstoken.New(cfg, "bed", clk, func(o *sts.Options) { o.BaseEndpoint = cfg.BaseEndpoint }).Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := ekstoken.DecodeURL(tok.Value)
	if err != nil {
		t.Fatal(err)
	}
	status, body := replay(t, raw, "bed")
	var doc struct {
		GetCallerIdentityResponse struct {
			GetCallerIdentityResult struct{ Arn, Account, UserId string }
		}
	}
	if err := json.Unmarshal(body, &doc); status != http.StatusOK || err != nil ||
		doc.GetCallerIdentityResponse.GetCallerIdentityResult.Arn != "arn:aws:iam::123456789012:user/administrator" {
		t.Fatalf("replaying the token: %d %s (%v)", status, body, err)
	}
	if status, body := replay(t, raw, "other-cluster"); status != http.StatusForbidden || !strings.Contains(string(body), "SignatureDoesNotMatch") {
		t.Errorf("another cluster's header: %d %s, want 403 SignatureDoesNotMatch", status, body)
	}
	tampered := strings.Replace(raw, "Action=GetCallerIdentity", "Action=GetCallerIdentity&Extra=1", 1)
	if status, _ := replay(t, tampered, "bed"); status != http.StatusForbidden {
		t.Errorf("a changed query: %d, want 403", status)
	}
	clk.Step(16 * time.Minute)
	if status, body := replay(t, raw, "bed"); status != http.StatusForbidden || !strings.Contains(string(body), "ExpiredToken") {
		t.Errorf("after 16 minutes: %d %s, want 403 ExpiredToken", status, body)
	}
}

// replay GETs the presigned URL with the cluster header, accepting JSON.
func replay(t *testing.T, raw, cluster string) (int, []byte) {
	t.Helper()
	if _, err := url.Parse(raw); err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodGet, raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(ekstoken.ClusterIDHeader, cluster)
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}
