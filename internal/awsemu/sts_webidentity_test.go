package awsemu_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

const issuer = "https://oidc.eks.us-east-1.amazonaws.com/id/EXAMPLED539D4633E53DE1B71EXAMPLE"

// oidcIssuer signs service-account tokens as an EKS cluster's issuer does.
type oidcIssuer struct {
	key  *ecdsa.PrivateKey
	jwks []byte
}

func newIssuer(t *testing.T) *oidcIssuer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	jwks, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	if err != nil {
		t.Fatal(err)
	}
	return &oidcIssuer{key: key, jwks: jwks}
}

func (i *oidcIssuer) token(t *testing.T, iss, sub, aud string, expiry time.Time) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: i.key}, (&jose.SignerOptions{}).WithHeader("kid", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(signer).Claims(jwt.Claims{Issuer: iss, Subject: sub, Audience: jwt.Audience{aud},
		Expiry: jwt.NewNumericDate(expiry), IssuedAt: jwt.NewNumericDate(expiry.Add(-time.Hour))}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// irsaTrust is the trust policy IRSA needs: the cluster's provider, for one
// service account, for STS.
func irsaTrust(providerARN string) string {
	u := strings.TrimPrefix(issuer, "https://")
	return `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Federated":"` + providerARN + `"},` +
		`"Action":"sts:AssumeRoleWithWebIdentity","Condition":{"StringEquals":{"` + u + `:sub":"system:serviceaccount:stowage:stowage","` +
		u + `:aud":"sts.amazonaws.com"}}}]}`
}

func TestAssumeRoleWithWebIdentityChecksTheTokenAndTheTrustPolicy(t *testing.T) {
	at := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(at)
	cfg := awsemu.DefaultConfig()
	cfg.Clock = clk
	e := awsemu.New(cfg)
	iss := newIssuer(t)
	providerARN, err := e.AddOIDCProvider(issuer, iss.jwks)
	if err != nil {
		t.Fatal(err)
	}
	admin := client(t, e)
	ctx := context.Background()
	_, err = iam.NewFromConfig(admin).CreateRole(ctx, &iam.CreateRoleInput{RoleName: awssdk.String("stowage-controller"),
		AssumeRolePolicyDocument: awssdk.String(irsaTrust(providerARN))})
	if err != nil {
		t.Fatal(err)
	}
	// AssumeRoleWithWebIdentity is not signed: a client without credentials.
	anon := admin.Copy()
	anon.Credentials = nil
	c := sts.NewFromConfig(anon)
	assume := func(token string) (*sts.AssumeRoleWithWebIdentityOutput, error) {
		return c.AssumeRoleWithWebIdentity(ctx, &sts.AssumeRoleWithWebIdentityInput{RoleArn: awssdk.String("arn:aws:iam::123456789012:role/stowage-controller"),
			RoleSessionName: awssdk.String("pod-1"), WebIdentityToken: awssdk.String(token)})
	}
	good := iss.token(t, issuer, "system:serviceaccount:stowage:stowage", "sts.amazonaws.com", at.Add(time.Hour))
	out, err := assume(good)
	if err != nil {
		t.Fatal(err)
	}
	if got := awssdk.ToString(out.AssumedRoleUser.Arn); got != "arn:aws:sts::123456789012:assumed-role/stowage-controller/pod-1" {
		t.Errorf("assumed role user %s", got)
	}
	if k := awssdk.ToString(out.Credentials.AccessKeyId); !strings.HasPrefix(k, "ASIA") || awssdk.ToTime(out.Credentials.Expiration) != at.Add(time.Hour) {
		t.Errorf("credentials %s expiring %v, want an ASIA key expiring in an hour", k, out.Credentials.Expiration)
	}
	other := newIssuer(t)
	for _, tc := range []struct{ name, token, code string }{
		{"another service account", iss.token(t, issuer, "system:serviceaccount:default:web", "sts.amazonaws.com", at.Add(time.Hour)), "AccessDenied"},
		{"another audience", iss.token(t, issuer, "system:serviceaccount:stowage:stowage", "kubernetes", at.Add(time.Hour)), "InvalidIdentityToken"},
		{"expired", iss.token(t, issuer, "system:serviceaccount:stowage:stowage", "sts.amazonaws.com", at.Add(-time.Hour)), "ExpiredTokenException"},
		{"signed by another key", other.token(t, issuer, "system:serviceaccount:stowage:stowage", "sts.amazonaws.com", at.Add(time.Hour)), "InvalidIdentityToken"},
		{"an unknown issuer", iss.token(t, "https://issuer.example.com", "system:serviceaccount:stowage:stowage", "sts.amazonaws.com", at.Add(time.Hour)), "InvalidIdentityToken"},
		{"not a JWT", "not-a-token", "InvalidIdentityToken"},
	} {
		if _, err := assume(tc.token); code(err) != tc.code {
			t.Errorf("%s: error %v, want %s", tc.name, err, tc.code)
		}
	}
	// The session's keys work until they expire; then every call is refused.
	sess := admin.Copy()
	sess.Credentials = credentials.NewStaticCredentialsProvider(awssdk.ToString(out.Credentials.AccessKeyId),
		awssdk.ToString(out.Credentials.SecretAccessKey), awssdk.ToString(out.Credentials.SessionToken))
	roleIAM := iam.NewFromConfig(sess)
	if _, err := roleIAM.GetRole(ctx, &iam.GetRoleInput{RoleName: awssdk.String("stowage-controller")}); code(err) != "AccessDenied" {
		t.Errorf("a role with no policy reading itself: error %v, want AccessDenied", err)
	}
	wrongToken := admin.Copy()
	wrongToken.Credentials = credentials.NewStaticCredentialsProvider(awssdk.ToString(out.Credentials.AccessKeyId),
		awssdk.ToString(out.Credentials.SecretAccessKey), "forged")
	if _, err := iam.NewFromConfig(wrongToken).GetRole(ctx, &iam.GetRoleInput{RoleName: awssdk.String("x")}); code(err) != "InvalidClientTokenId" {
		t.Errorf("a session key with another token: error %v, want InvalidClientTokenId", err)
	}
	clk.Step(time.Hour)
	if _, err := roleIAM.GetRole(ctx, &iam.GetRoleInput{RoleName: awssdk.String("x")}); code(err) != "ExpiredToken" {
		t.Errorf("an expired session: error %v, want ExpiredToken", err)
	}
}
