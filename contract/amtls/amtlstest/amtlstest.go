// Package amtlstest starts HTTPS test servers the way the AM serves: a certificate for 127.0.0.1
// issued by a fresh per-application authority, whose PEM certificate the test's clients trust.
package amtlstest

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/yarn-am/yarn-am/contract/amtls"
)

// Server starts h over HTTPS with a certificate from a new authority and returns the server and the
// authority's PEM certificate. The server is closed when the test ends.
func Server(t testing.TB, h http.Handler) (*httptest.Server, []byte) {
	t.Helper()
	ca, key := Authority(t)
	return ServerOf(t, h, ca, key), ca
}

// Authority creates a new per-application authority: its PEM certificate and key.
func Authority(t testing.TB) (certPEM, keyPEM []byte) {
	t.Helper()
	ca, key, err := amtls.NewAuthority("test")
	if err != nil {
		t.Fatal(err)
	}
	return ca, key
}

// ServerOf starts h over HTTPS with a certificate for 127.0.0.1 from the authority ca/key, as a
// later attempt of the same application's AM serves (closed when the test ends).
func ServerOf(t testing.TB, h http.Handler, ca, key []byte) *httptest.Server {
	t.Helper()
	cert, err := amtls.ServerCertificate(ca, key, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = amtls.ServerConfig(cert)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}
