package amtls

import (
	"crypto/x509"
	"testing"
)

// The AM's certificate verifies against the authority for the host it was issued for (an IP address
// or a DNS name) and for no other host; another authority does not verify it; RequireHTTPS lets only
// https:// URLs through.
func TestServerCertificateVerifiesOnlyForItsHostAndAuthority(t *testing.T) {
	ca, key, err := NewAuthority("application_1_0001")
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := NewAuthority("other")
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"10.1.2.3", "nm7.example.com"} {
		cert, err := ServerCertificate(ca, key, host)
		if err != nil {
			t.Fatal(err)
		}
		verify := func(caPEM []byte, name string) error {
			cfg, err := ClientConfig(caPEM)
			if err != nil {
				t.Fatal(err)
			}
			_, err = cert.Leaf.Verify(x509.VerifyOptions{Roots: cfg.RootCAs, DNSName: name, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
			return err
		}
		if err := verify(ca, host); err != nil {
			t.Errorf("%s: the application's authority does not verify it: %v", host, err)
		}
		if verify(ca, "10.9.9.9") == nil || verify(ca, "evil.example.com") == nil {
			t.Errorf("%s: the certificate verifies for another host", host)
		}
		if verify(other, host) == nil {
			t.Errorf("%s: another authority verifies the certificate", host)
		}
	}
	if _, err := ServerCertificate(ca, []byte("not a key"), "h"); err == nil {
		t.Error("a bad key is accepted")
	}
	for url, ok := range map[string]bool{"https://h:1/api/v1/": true, "http://h:1/api/v1/": false, "h:1": false, "HTTPS://h:1/": true, "https://": false} {
		if got := RequireHTTPS(url, "X") == nil; got != ok {
			t.Errorf("RequireHTTPS(%q) ok=%v, want %v", url, got, ok)
		}
	}
}
