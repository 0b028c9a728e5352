package testenv

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"testing"
)

func TestPKIServingCertVerifiesFor127001(t *testing.T) {
	p, err := newPKI(t.TempDir())
	if err != nil {
		t.Fatalf("newPKI() error = %v", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(p.CAPEM) {
		t.Fatal("CA PEM does not parse")
	}
	serving := readCert(t, p.ServingCertFile)
	opts := x509.VerifyOptions{Roots: roots, DNSName: "127.0.0.1", KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	if _, err := serving.Verify(opts); err != nil {
		t.Errorf("serving cert does not verify for 127.0.0.1: %v", err)
	}
	admin := readCert(t, p.AdminCertFile)
	if got := admin.Subject.Organization; len(got) != 1 || got[0] != "system:masters" {
		t.Errorf("admin cert organization = %v, want [system:masters]", got)
	}
	opts = x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if _, err := admin.Verify(opts); err != nil {
		t.Errorf("admin cert does not verify as a client cert: %v", err)
	}
}

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatalf("%s holds no PEM block", path)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}
