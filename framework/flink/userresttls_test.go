package flink

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	pkcs12 "software.sslmate.com/src/go-pkcs12"

	"github.com/yarn-am/yarn-am/contract/amtls"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/framework/flink/dist"
	"github.com/yarn-am/yarn-am/jobfile"
)

// userStores writes a PKCS12 key store (a client certificate of a's) and
// trust store (a's certificate) into dir/flink/conf, as a home would ship them, and returns the
// job's REST TLS keys naming them relative to dir.
func userStores(t *testing.T, dir string, a testAuthority) *dist.Config {
	t.Helper()
	// The key store holds a client certificate: what the AM presents (the JobManager's own server
	// certificate is the server's business, checked against the trust store).
	cert, err := a.ClientCertificate("flink rest")
	require.NoError(t, err)
	ca, err := amtls.ParseCertificate(a.CACert())
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	require.NoError(t, err)
	ks, err := pkcs12.Modern.Encode(cert.PrivateKey, leaf, []*x509.Certificate{ca}, "kspw")
	require.NoError(t, err)
	ts, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{ca}, "tspw")
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "flink", "conf"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "flink", "conf", "rest.p12"), ks, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "flink", "conf", "trust.p12"), ts, 0o600))
	c := dist.NewConfig()
	for k, v := range map[string]string{
		dist.KeyRESTSSL: "true", KeyRESTSSLAuth: "true",
		KeyRESTKeyStore: "flink/conf/rest.p12", keyRESTStorePassword: "kspw",
		KeyRESTTrustStore: "flink/conf/trust.p12", keyRESTTrustPassword: "tspw",
		KeySSLAlgorithms: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
	} {
		c.Set(k, v)
	}
	return c
}

// With the job's own security.ssl.rest.* the AM's REST client trusts the configured trust store and
// presents the configured key store: it reaches a JobManager that asks for a client certificate of
// that authority, and no other server.
func TestUserRESTClientUsesTheConfiguredStores(t *testing.T) {
	dir := t.TempDir()
	a := newTestAuthority(t)
	conf := userStores(t, dir, a)
	cfg, err := userRESTClient(conf, dir)
	require.NoError(t, err)
	require.Len(t, cfg.Certificates, 1, "the key store's key and chain, presented with authentication-enabled")

	cert, err := a.ServerCertificate("127.0.0.1")
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(a.CACert()))
	var sawClient bool
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawClient = len(r.TLS.PeerCertificates) > 0
		w.Write([]byte(`{"flink-version":"1.20.5"}`))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.StartTLS()
	defer srv.Close()
	resp, err := (&http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}).Get(srv.URL + "/config")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.True(t, sawClient)

	other := httptest.NewTLSServer(http.NotFoundHandler()) // another authority's certificate
	defer other.Close()
	_, err = (&http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}).Get(other.URL)
	assert.Error(t, err, "a server the trust store does not vouch for")

	conf.Set(KeyRESTSSLAuth, "false")
	cfg, err = userRESTClient(conf, dir)
	require.NoError(t, err)
	assert.Empty(t, cfg.Certificates, "no client certificate without authentication")
}

// The job's own REST TLS that the AM could not use is refused naming the key, the value and what
// would do: JKS (by type or by content), a missing store, a wrong password, a key password of its own,
// cipher suites Go does not implement.
func TestUserRESTClientRefusals(t *testing.T) {
	dir := t.TempDir()
	conf := userStores(t, dir, newTestAuthority(t))
	cases := []struct {
		name string
		set  map[string]string
		del  string
		want string
	}{
		{"JKS type", map[string]string{keyRESTTrustType: "JKS"}, "", `security.ssl.rest.truststore-type = "JKS": yarn-am reads PKCS12 stores only`},
		{"JKS content", map[string]string{KeyRESTTrustStore: "flink/conf/trust.jks"}, "", `is a JKS store: yarn-am reads PKCS12 stores only; convert it with keytool`},
		{"no trust store", nil, KeyRESTTrustStore, "security.ssl.rest.enabled = true needs security.ssl.rest.truststore"},
		{"no key store with authentication", nil, KeyRESTKeyStore, "needs security.ssl.rest.keystore"},
		{"wrong password", map[string]string{keyRESTStorePassword: "nope"}, "", `security.ssl.rest.keystore = "` + filepath.Join(dir, "flink/conf/rest.p12") + `": not a PKCS12 key store that security.ssl.rest.keystore-password opens`},
		{"key password of its own", map[string]string{keyRESTKeyPassword: "other"}, "", "security.ssl.rest.key-password differs from security.ssl.rest.keystore-password"},
		{"no cipher suite Go has", map[string]string{KeySSLAlgorithms: "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256"}, "", `security.ssl.algorithms = "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256": none of these cipher suites`},
		{"missing file", map[string]string{KeyRESTTrustStore: "flink/conf/gone.p12"}, "", "gone.p12"},
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "flink/conf/trust.jks"), append(append([]byte{}, jksMagic...), 0, 0, 0, 2), 0o600))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := conf.Clone()
			for k, v := range tc.set {
				c.Set(k, v)
			}
			if tc.del != "" {
				c.Delete(tc.del)
			}
			_, err := userRESTClient(c, dir)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	plain := dist.NewConfig()
	assert.NoError(t, checkUserRESTTLS(plain), "no TLS of the job's own: nothing to check")
}

// A job with its own REST TLS keeps it: the AM writes no stores of its own, the driver gets no
// directory of them, and the AM's REST client (the proxy's) uses the job's stores.
func TestStartAMKeepsTheJobsOwnRESTTLS(t *testing.T) {
	p := writeJob(t, `[flink]
home = "flink"
jar = "job.jar"
[flink.config]
"security.ssl.rest.enabled" = true
"security.ssl.rest.authentication-enabled" = true
"security.ssl.rest.keystore" = "flink/conf/rest.p12"
"security.ssl.rest.keystore-password" = "kspw"
"security.ssl.rest.truststore" = "flink/conf/trust.p12"
"security.ssl.rest.truststore-password" = "tspw"
"security.ssl.algorithms" = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"
`)
	fakeFlinkHome(t, filepath.Dir(p))
	j, err := jobfile.LoadJob(p)
	require.NoError(t, err)
	wd := t.TempDir()
	t.Chdir(wd)
	userStores(t, wd, newTestAuthority(t))
	fw, err := Flink{}.StartAM(t.Context(), j, framework.AMStart{Host: "127.0.0.1", TLS: newTestAuthority(t), TrackingURL: "http://am:8088/"})
	require.NoError(t, err)
	assert.NotContains(t, fw.DriverEnv, EnvRESTTLS)
	_, err = os.Stat(filepath.Join(wd, restTLSDir))
	assert.ErrorIs(t, err, os.ErrNotExist, "no stores of the AM's")
	tr, ok := fw.Proxy.Transport.(*http.Transport)
	require.True(t, ok)
	assert.Len(t, tr.TLSClientConfig.Certificates, 1, "the job's key store")

	require.NoError(t, os.Remove(filepath.Join(wd, "flink/conf/trust.p12")))
	_, err = Flink{}.StartAM(t.Context(), j, framework.AMStart{Host: "127.0.0.1", TLS: newTestAuthority(t)})
	assert.ErrorContains(t, err, "trust.p12", "a store the AM cannot read fails its start, naming it")
}
