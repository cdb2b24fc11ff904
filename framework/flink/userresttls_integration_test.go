//go:build integration

package flink_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	pkcs12 "software.sslmate.com/src/go-pkcs12"

	"github.com/yarn-am/yarn-am/testkit/e2e"
)

// TestFlinkUsersOwnRESTTLS: a session cluster whose job file turns on Flink's REST TLS with its own
// PKCS12 stores and client authentication (docs/flink.md#your-own-rest-tls) runs: the driver learns
// the bound REST port with the configured stores, the AM's watch and proxy reach the JobManager with
// them (its TaskManager is read through the AM), and the JobManager answers the configured
// certificate and nobody without it. On each tested Flink line.
func TestFlinkUsersOwnRESTTLS(t *testing.T) {
	e2e.Env(t)
	eachFlinkAtOnce(t, testFlinkUsersOwnRESTTLS)
}

func testFlinkUsersOwnRESTTLS(t *testing.T, v flinkVersion) {
	dir := t.TempDir()
	ca, leaf := userRESTCerts(t)
	ks, err := pkcs12.Modern.Encode(leaf.PrivateKey, leaf.Leaf, []*x509.Certificate{ca}, "kspass")
	require.NoError(t, err)
	ts, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{ca}, "tspass")
	require.NoError(t, err)
	keyStore, trustStore := filepath.Join(dir, "rest.p12"), filepath.Join(dir, "trust.p12")
	require.NoError(t, os.WriteFile(keyStore, ks, 0o644))
	require.NoError(t, os.WriteFile(trustStore, ts, 0o644))
	// The mini cluster's nodes are this machine: absolute paths reach every container.
	config := fmt.Sprintf(`"security.ssl.rest.enabled" = true
"security.ssl.rest.authentication-enabled" = true
"security.ssl.rest.keystore" = %q
"security.ssl.rest.keystore-password" = "kspass"
"security.ssl.rest.key-password" = "kspass"
"security.ssl.rest.truststore" = %q
"security.ssl.rest.truststore-password" = "tspass"
"security.ssl.algorithms" = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"`, keyStore, trustStore)
	job := flinkJobOf(t, v, "flink-own-rest-tls", 1, 1, nil, config)
	id := e2e.SubmitDetached(t, job)
	defer e2e.YarnAM(t, time.Minute, "kill", id)
	waitSessionTaskManager(t, id)
	d := e2e.Status(t, id)
	require.False(t, e2e.IsEnded(d.Report.State), "the session cluster ended: %s\n%s", d.Report.Diagnostics, e2e.ContainerLogs(id))
	logs := appLogText(id)
	m := boundLine.FindStringSubmatch(logs)
	require.NotNil(t, m, "the driver learnt the ports with the job's own stores:\n%s", e2e.ContainerLogs(id))
	assert.Contains(t, e2e.YarnAM(t, time.Minute, "status", id).Stdout, "no job yet", "the AM's watch reads the JobManager with the job's stores")

	// Directly: the configured client certificate is answered, no certificate is not.
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	get := func(certs []tls.Certificate) error {
		c := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: certs}}}
		resp, err := c.Get("https://" + m[2] + "/config")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s", resp.Status)
		}
		return nil
	}
	assert.NoError(t, get([]tls.Certificate{leaf}), "the configured certificate")
	assert.Error(t, get(nil), "no client certificate")
}

// userRESTCerts is a user's own authority and one ECDSA certificate of it for the mini cluster's
// hosts, usable as server and client (Flink's REST endpoint and client share one key store).
func userRESTCerts(t *testing.T) (*x509.Certificate, tls.Certificate) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "user's own REST CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	var ips []net.IP
	for _, h := range []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"} {
		ips = append(ips, net.ParseIP(h))
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "flink rest"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: ips, DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return ca, tls.Certificate{Certificate: [][]byte{der, caDER}, PrivateKey: key, Leaf: leaf}
}
