package config_test

import (
	"encoding/pem"
	"net/http/httptest"
	"testing"
)

// pemOf is the PEM of the test server's certificate, which is its own CA.
func pemOf(t *testing.T, srv *httptest.Server) []byte {
	t.Helper()
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}
