package amtls

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A server that asks for a client certificate of the application's authority answers the holder of
// one issued by ClientCertificate, and refuses the handshake of a client with none or with one from
// another authority; a server certificate does not serve as a client's.
func TestClientCertificateIsTheOnlyKeyToAMutualTLSServer(t *testing.T) {
	ca, key, err := NewAuthority("application_1_0001")
	if err != nil {
		t.Fatal(err)
	}
	otherCA, otherKey, err := NewAuthority("other")
	if err != nil {
		t.Fatal(err)
	}
	srvCert, err := Issue(ca, key, x509.ExtKeyUsageServerAuth, "127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := ParseCertificate(ca)
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{srvCert}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	defer srv.Close()

	get := func(certs ...tls.Certificate) error {
		cfg, err := ClientConfig(ca)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = certs
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
		resp, err := c.Get(srv.URL)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err == nil && string(b) != "ok" {
			t.Errorf("answer %q", b)
		}
		return err
	}
	client, err := ClientCertificate(ca, key, "yarn-am AM")
	if err != nil {
		t.Fatal(err)
	}
	if err := get(client); err != nil {
		t.Fatalf("the application's client certificate is refused: %v", err)
	}
	if get() == nil {
		t.Error("a client without a certificate is answered")
	}
	stranger, err := ClientCertificate(otherCA, otherKey, "stranger")
	if err != nil {
		t.Fatal(err)
	}
	if get(stranger) == nil {
		t.Error("a client certificate of another authority is answered")
	}
	if get(srvCert) == nil {
		t.Error("a server certificate is accepted as a client's")
	}
	if _, err := Issue(ca, key, x509.ExtKeyUsageServerAuth); err == nil {
		t.Error("a certificate without a name is issued")
	}
}
