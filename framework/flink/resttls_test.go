package flink

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	pkcs12 "software.sslmate.com/src/go-pkcs12"

	"github.com/yarn-am/yarn-am/contract/amtls"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/jobfile"
)

// testAuthority is the application's authority as the AM hands it to a framework.
type testAuthority struct{ cert, key []byte }

func newTestAuthority(t *testing.T) testAuthority {
	cert, key, err := amtls.NewAuthority("application_1_0001")
	require.NoError(t, err)
	return testAuthority{cert, key}
}

func (a testAuthority) CACert() []byte { return a.cert }
func (a testAuthority) ServerCertificate(hosts ...string) (tls.Certificate, error) {
	return amtls.Issue(a.cert, a.key, x509.ExtKeyUsageServerAuth, hosts...)
}
func (a testAuthority) ClientCertificate(name string) (tls.Certificate, error) {
	return amtls.ClientCertificate(a.cert, a.key, name)
}
func (a testAuthority) PeerCertificate(name string) (tls.Certificate, error) {
	return amtls.PeerCertificate(a.cert, a.key, name)
}

// The AM writes the JobManager's REST TLS for its driver readable by the application's user alone:
// PKCS12 stores (Java 17's default type) that hold the server's key and chain for the AM's host and
// loopback, and the REST API's own authority alone as the trust, not the application's; the driver
// reads them back as the Flink keys of mutual TLS, the password only in the keys, and a client
// configuration that presents the client certificate and trusts that authority alone.
func TestRESTTLSStoresAndKeys(t *testing.T) {
	dir := filepath.Join(t.TempDir(), restTLSDir)
	rt, err := writeRESTTLS(dir, "nm1.example.com")
	require.NoError(t, err)
	st, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), st.Mode().Perm(), "the directory")
	for _, f := range []string{restKeyStore, restTrustStore, restPassword, restClientPEM, restCAPEM} {
		st, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), f)
	}
	pw, err := os.ReadFile(filepath.Join(dir, restPassword))
	require.NoError(t, err)
	require.Len(t, string(pw), 48, "a random password of 24 bytes")

	ks, err := os.ReadFile(filepath.Join(dir, restKeyStore))
	require.NoError(t, err)
	_, leaf, chain, err := pkcs12.DecodeChain(ks, string(pw))
	require.NoError(t, err, "the key store opens with the password")
	assert.ElementsMatch(t, []string{"nm1.example.com", "localhost"}, leaf.DNSNames)
	require.Len(t, leaf.IPAddresses, 1)
	assert.Equal(t, "127.0.0.1", leaf.IPAddresses[0].String())
	assert.Equal(t, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, leaf.ExtKeyUsage)
	require.Len(t, chain, 1)
	ca, err := amtls.ParseCertificate(rt.caPEM)
	require.NoError(t, err)
	assert.True(t, chain[0].Equal(ca), "the chain ends at the REST API's own authority")
	_, _, _, err = pkcs12.DecodeChain(ks, "wrong")
	assert.Error(t, err, "the key store opens without its password")
	ts, err := os.ReadFile(filepath.Join(dir, restTrustStore))
	require.NoError(t, err)
	trusted, err := pkcs12.DecodeTrustStore(ts, string(pw))
	require.NoError(t, err)
	require.Len(t, trusted, 1)
	assert.True(t, trusted[0].Equal(ca), "the trust store holds the authority alone")

	keys, client, err := readRESTTLS(dir)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"security.ssl.rest.enabled": "true", "security.ssl.rest.authentication-enabled": "true",
		"security.ssl.rest.keystore": filepath.Join(dir, restKeyStore), "security.ssl.rest.truststore": filepath.Join(dir, restTrustStore),
		"security.ssl.rest.keystore-password": string(pw), "security.ssl.rest.key-password": string(pw),
		"security.ssl.rest.truststore-password": string(pw),
		"security.ssl.rest.keystore-type":       "PKCS12", "security.ssl.rest.truststore-type": "PKCS12",
	}, keys)
	for _, c := range []*tls.Config{client, rt.client} {
		require.Len(t, c.Certificates, 1)
		assert.Equal(t, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, c.Certificates[0].Leaf.ExtKeyUsage)
		assert.True(t, c.RootCAs.Equal(rt.client.RootCAs))
	}
	_, err = leaf.Verify(x509.VerifyOptions{Roots: client.RootCAs, DNSName: "nm1.example.com"})
	assert.NoError(t, err, "the driver's client trusts the JobManager's certificate")

	// A later attempt writes afresh over the same directory, a neighbour's loosened mode included.
	require.NoError(t, os.Chmod(dir, 0o755))
	again, err := writeRESTTLS(dir, "nm1.example.com")
	require.NoError(t, err)
	st, err = os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), st.Mode().Perm())
	assert.NotEqual(t, rt.caPEM, again.caPEM, "each JobManager's REST API has an authority of its own")

	_, _, err = readRESTTLS(t.TempDir())
	assert.ErrorContains(t, err, envRESTTLS)
}

// closeREST sets the keys and web.submit.enable, and keeps a configured cipher list while adding the
// suites of the AM's ECDSA certificates.
func TestCloseRESTSetsFlinkKeys(t *testing.T) {
	keys := map[string]string{flinkdist.KeyRESTSSL: "true", keyRESTSSLAuth: "true"}
	c := flinkdist.NewConfig()
	closeREST(c, keys, false)
	for k, want := range map[string]string{flinkdist.KeyRESTSSL: "true", keyRESTSSLAuth: "true", keyWebSubmit: "false",
		keySSLAlgorithms: strings.Join(restCipherSuites, ",")} {
		v, _ := c.Get(k)
		assert.Equal(t, want, v, k)
	}
	c = flinkdist.NewConfig()
	c.Set(keySSLAlgorithms, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, tls_ecdhe_ecdsa_with_aes_128_gcm_sha256")
	closeREST(c, keys, true)
	v, _ := c.Get(keySSLAlgorithms)
	assert.Equal(t, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,tls_ecdhe_ecdsa_with_aes_128_gcm_sha256,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", v)
	v, _ = c.Get(keyWebSubmit)
	assert.Equal(t, "true", v)
}

// StartAM gives the driver alone the directory of the REST API's TLS, every process the AM's
// address of the UI, and serves the UI through the AM (Proxy) at the JobManager's REST address over
// https, never as a link to the JobManager itself.
func TestStartAMClosesTheJobManager(t *testing.T) {
	p := writeJob(t, "[flink]\nhome = \"flink\"\njar = \"job.jar\"\n")
	fakeFlinkHome(t, filepath.Dir(p))
	j, err := jobfile.LoadJob(p)
	require.NoError(t, err)
	wd := t.TempDir()
	t.Chdir(wd)
	fw, err := flinkFramework{}.StartAM(context.Background(), j, framework.AMStart{Host: "127.0.0.1", TLS: newTestAuthority(t), TrackingURL: "http://am:8088/"})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(wd, restTLSDir), fw.DriverEnv[envRESTTLS])
	assert.NotContains(t, fw.WorkerEnv, envRESTTLS, "TaskManagers get no key")
	assert.Equal(t, "http://am:8088/flink/", fw.WorkerEnv[envUI])
	require.NotNil(t, fw.Proxy)
	assert.Equal(t, "flink", fw.Proxy.Path)
	assert.Equal(t, "https://127.0.0.1", fw.Proxy.Target.String(), "the host alone: the port is the one the JobManager binds (bound.go)")
	require.NotNil(t, fw.Proxy.Access, "what anonymous readers reach is Flink's list (proxyaccess.go)")
	assert.Equal(t, framework.OwnerOnly, fw.Proxy.Access("/jobs/a1b2/yarn-cancel").Level, "Flink's acting GETs are the owner's only")
	assert.Equal(t, []string{"this.media='all'"}, fw.Proxy.InlineHandlers, "the dashboard's one inline handler, which the AM allows by its hash")
	assert.True(t, fw.Proxy.InlineStyles, "the dashboard sets inline styles")
	assert.Empty(t, fw.Links, "no link to the JobManager's own address")
	_, err = os.Stat(filepath.Join(wd, restTLSDir, restKeyStore))
	assert.NoError(t, err)

	_, err = flinkFramework{}.StartAM(context.Background(), j, framework.AMStart{Host: "127.0.0.1"})
	assert.ErrorContains(t, err, "no TLS authority", "a JobManager is never left open")
}

// The REST API answers the AM's client certificate and no certificate of the application's authority:
// the peer certificate every TaskExecutor holds for the job's internal TLS (StartAM's WorkerSecrets:
// server and client authentication, from that authority) is refused by a server that trusts what the
// REST trust store StartAM wrote holds, as the JobManager's REST endpoint does (before, it trusted
// the application's authority, and took a TaskExecutor's certificate for the AM's).
// TestFlinkInternalTLS shows the same of the real JVMs.
func TestRESTRefusesTheTaskExecutorsPeerCertificate(t *testing.T) {
	p := writeJob(t, "[flink]\nhome = \"flink\"\njar = \"job.jar\"\n")
	fakeFlinkHome(t, filepath.Dir(p))
	j, err := jobfile.LoadJob(p)
	require.NoError(t, err)
	wd := t.TempDir()
	t.Chdir(wd)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fw, err := flinkFramework{}.StartAM(ctx, j, framework.AMStart{Host: "127.0.0.1", TLS: newTestAuthority(t)})
	require.NoError(t, err)
	dir := fw.DriverEnv[envRESTTLS]
	require.Equal(t, filepath.Join(wd, restTLSDir), dir)
	pw, err := os.ReadFile(filepath.Join(dir, restPassword))
	require.NoError(t, err)
	ts, err := os.ReadFile(filepath.Join(dir, restTrustStore))
	require.NoError(t, err)
	trusted, err := pkcs12.DecodeTrustStore(ts, string(pw))
	require.NoError(t, err)
	pool := x509.NewCertPool()
	for _, c := range trusted {
		pool.AddCert(c)
	}
	server, _ := restServer(t, dir)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("{}")) }))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{server}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.StartTLS()
	defer srv.Close()
	get := func(cfg *tls.Config) error {
		resp, err := (&http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}).Get(srv.URL + "/config")
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	_, client, err := readRESTTLS(dir)
	require.NoError(t, err)
	require.NoError(t, get(client), "the AM's (and the driver's) client certificate is answered")

	// What a TaskExecutor holds: the application's peer certificate, with its chain, from its token file.
	secret := fw.WorkerSecrets[secretInternalTLS]
	require.NotEmpty(t, secret)
	peer, err := tls.X509KeyPair(secret, secret)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(peer.Certificate[0])
	require.NoError(t, err)
	assert.Contains(t, leaf.ExtKeyUsage, x509.ExtKeyUsageClientAuth, "the peer certificate is a client's too")
	cfg := client.Clone()
	// Sent whatever authorities the server names, as a TaskExecutor's job code would.
	cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &peer, nil }
	err = get(cfg)
	if assert.Error(t, err, "a TaskExecutor's peer certificate is refused") {
		assert.Contains(t, err.Error(), "certificate")
	}
	_, err = leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	assert.Error(t, err, "the REST trust store does not vouch for the application's authority")
}
