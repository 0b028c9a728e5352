package testenv

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// certValidity covers any test run; the certificates never leave the temp dir.
const certValidity = 24 * time.Hour

// pki holds the paths and PEM contents of a control plane's certificates.
type pki struct {
	CAFile, ServingCertFile, ServingKeyFile string
	AdminCertFile, AdminKeyFile             string
	SAPrivateKeyFile, SAPublicKeyFile       string
	CAPEM, AdminCertPEM, AdminKeyPEM        []byte
}

// issuer signs certificates with one CA.
type issuer struct {
	cert *x509.Certificate
	key  crypto.Signer
}

// newPKI writes a CA, an API server serving certificate (SAN 127.0.0.1), an
// admin client certificate (O=system:masters) and a service-account key pair
// into dir.
func newPKI(dir string) (*pki, error) {
	ca, caPEM, err := newCA()
	if err != nil {
		return nil, err
	}
	p := &pki{
		CAFile:           filepath.Join(dir, "ca.crt"),
		ServingCertFile:  filepath.Join(dir, "apiserver.crt"),
		ServingKeyFile:   filepath.Join(dir, "apiserver.key"),
		AdminCertFile:    filepath.Join(dir, "admin.crt"),
		AdminKeyFile:     filepath.Join(dir, "admin.key"),
		SAPrivateKeyFile: filepath.Join(dir, "sa.key"),
		SAPublicKeyFile:  filepath.Join(dir, "sa.pub"),
		CAPEM:            caPEM,
	}
	if err := writeFile(p.CAFile, caPEM); err != nil {
		return nil, err
	}
	if err := p.writeServing(ca); err != nil {
		return nil, err
	}
	if err := p.writeAdmin(ca); err != nil {
		return nil, err
	}
	return p, p.writeServiceAccountKeys()
}

func (p *pki) writeServing(ca *issuer) error {
	tmpl := leafTemplate(pkix.Name{CommonName: "kube-apiserver"}, x509.ExtKeyUsageServerAuth)
	tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv4(10, 0, 0, 1)}
	tmpl.DNSNames = []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}
	certPEM, keyPEM, err := ca.issue(tmpl)
	if err != nil {
		return fmt.Errorf("issuing the serving certificate: %w", err)
	}
	return writePair(p.ServingCertFile, certPEM, p.ServingKeyFile, keyPEM)
}

func (p *pki) writeAdmin(ca *issuer) error {
	tmpl := leafTemplate(pkix.Name{CommonName: "stowage-admin", Organization: []string{"system:masters"}}, x509.ExtKeyUsageClientAuth)
	certPEM, keyPEM, err := ca.issue(tmpl)
	if err != nil {
		return fmt.Errorf("issuing the admin client certificate: %w", err)
	}
	p.AdminCertPEM, p.AdminKeyPEM = certPEM, keyPEM
	return writePair(p.AdminCertFile, certPEM, p.AdminKeyFile, keyPEM)
}

func (p *pki) writeServiceAccountKeys() error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generating the service-account key: %w", err)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return fmt.Errorf("encoding the service-account public key: %w", err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	return writePair(p.SAPublicKeyFile, pubPEM, p.SAPrivateKeyFile, keyPEM)
}

func newCA() (*issuer, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating the CA key: %w", err)
	}
	tmpl := leafTemplate(pkix.Name{CommonName: "stowage-testenv-ca"})
	tmpl.IsCA = true
	tmpl.BasicConstraintsValid = true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("self-signing the CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, fmt.Errorf("parsing the CA: %w", err)
	}
	return &issuer{cert: cert, key: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// issue signs tmpl with a fresh key and returns the certificate and key as PEM.
func (ca *issuer) issue(tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating a key: %w", err)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, fmt.Errorf("signing a certificate: %w", err)
	}
	keyPEM, err = encodeKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, nil
}

func leafTemplate(subject pkix.Name, usages ...x509.ExtKeyUsage) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      subject,
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  usages,
	}
}

func encodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encoding a private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

func writePair(certFile string, certPEM []byte, keyFile string, keyPEM []byte) error {
	if err := writeFile(certFile, certPEM); err != nil {
		return err
	}
	return writeFile(keyFile, keyPEM)
}

func writeFile(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Base(path), err)
	}
	return nil
}
