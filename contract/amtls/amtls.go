// Package amtls is the TLS of the AM's secret-bearing HTTP API (docs/design.md#security): a
// per-application certificate authority, the AM's server certificate issued from it for NM_HOST, and
// the client configuration that trusts that authority only.
//
// The client creates the authority at submit and puts its certificate and key into the AM's
// credentials (contract.TLSCACertAlias, contract.TLSCAKeyAlias); the AM issues itself a certificate
// for the host it runs on and serves HTTPS with it; TaskExecutors get the authority's certificate
// only (never the key) in their credentials, and the driver gets it as a PEM file. Every party that
// sends the application secret trusts nothing but that one authority, so a sniffer sees TLS and an
// impostor on the AM's address cannot present a certificate they accept.
//
// The package imports only the standard library.
package amtls

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"time"
)

// Validity of the authority: long enough for a --service application that runs for years.
const authorityValidity = 10 * 365 * 24 * time.Hour

func serial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}

// NewAuthority creates a per-application certificate authority (ECDSA P-256) and returns its
// certificate and private key as PEM.
func NewAuthority(name string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating the application's TLS key: %w", err)
	}
	sn, err := serial()
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: "yarn-am CA " + name},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(authorityValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true, // it signs the AM's server certificate and nothing under it
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("creating the application's TLS authority: %w", err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), nil
}

// ParseCertificate reads one PEM certificate.
func ParseCertificate(certPEM []byte) (*x509.Certificate, error) {
	b, _ := pem.Decode(certPEM)
	if b == nil || b.Type != "CERTIFICATE" {
		return nil, errors.New("not a PEM certificate (-----BEGIN CERTIFICATE-----)")
	}
	return x509.ParseCertificate(b.Bytes)
}

// ServerCertificate issues the AM's server certificate for host (an IP address or a DNS name,
// NM_HOST) from the authority.
func ServerCertificate(caCertPEM, caKeyPEM []byte, host string) (tls.Certificate, error) {
	return Issue(caCertPEM, caKeyPEM, x509.ExtKeyUsageServerAuth, host)
}

// ClientCertificate issues a client certificate named name from the authority: what a server of the
// application that asks for one (a Flink JobManager's REST API, docs/flink.md#who-can-reach-the-jobmanager)
// accepts, and nobody outside the AM holds.
func ClientCertificate(caCertPEM, caKeyPEM []byte, name string) (tls.Certificate, error) {
	return Issue(caCertPEM, caKeyPEM, x509.ExtKeyUsageClientAuth, name)
}

// Issue issues a certificate from the authority for usage (server or client authentication); names
// are its subject alternative names (IP addresses or DNS names), the first also its common name.
func Issue(caCertPEM, caKeyPEM []byte, usage x509.ExtKeyUsage, names ...string) (tls.Certificate, error) {
	return issue(caCertPEM, caKeyPEM, []x509.ExtKeyUsage{usage}, names)
}

// PeerCertificate issues a certificate named name for both server and client authentication: one
// that processes of the application present to each other under mutual TLS, each side both a
// server and a client (a Flink job's internal connections).
func PeerCertificate(caCertPEM, caKeyPEM []byte, name string) (tls.Certificate, error) {
	return issue(caCertPEM, caKeyPEM, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, []string{name})
}

func issue(caCertPEM, caKeyPEM []byte, usages []x509.ExtKeyUsage, names []string) (tls.Certificate, error) {
	if len(names) == 0 {
		return tls.Certificate{}, errors.New("a certificate needs a name")
	}
	ca, err := ParseCertificate(caCertPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("the application's TLS authority: %w", err)
	}
	kb, _ := pem.Decode(caKeyPEM)
	if kb == nil {
		return tls.Certificate{}, errors.New("the application's TLS authority key is not PEM")
	}
	caKey, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("the application's TLS authority key: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	sn, err := serial()
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: sn,
		Subject:      pkix.Name{CommonName: names[0]},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     ca.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  usages,
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("issuing a certificate for %s: %w", names[0], err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der, ca.Raw}, PrivateKey: key, Leaf: leaf}, nil
}

// ServerConfig is the AM's TLS configuration.
func ServerConfig(cert tls.Certificate) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

// ClientConfig trusts the application's authority and nothing else (not the system roots); the host
// name is verified as usual.
func ClientConfig(caCertPEM []byte) (*tls.Config, error) {
	ca, err := ParseCertificate(caCertPEM)
	if err != nil {
		return nil, fmt.Errorf("the application's TLS authority: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// HTTPClient is an http.Client that trusts only the application's authority and never follows a
// redirect (a redirect could carry the Authorization header elsewhere).
func HTTPClient(caCertPEM []byte, timeout time.Duration) (*http.Client, error) {
	cfg, err := ClientConfig(caCertPEM)
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg
	tr.Proxy = nil // the AM is on the cluster's network; an HTTPS_PROXY would only see CONNECT
	return &http.Client{Transport: tr, Timeout: timeout, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}, nil
}

// RequireHTTPS returns an error unless rawURL is an https:// URL: the application secret is never
// sent over plain HTTP. what names where the URL came from (an environment variable).
func RequireHTTPS(rawURL, what string) error {
	if u, err := url.Parse(rawURL); err == nil && u.Scheme == "https" && u.Host != "" {
		return nil
	}
	return fmt.Errorf("%s=%q: refusing to send the application secret to a URL that is not https:// (the AM serves its secret-bearing API over HTTPS only)", what, rawURL)
}
