package flink

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/asn1"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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

// userStores writes a PKCS12 key store (a client certificate of a's) and
// trust store (a's certificate) into dir/flink/conf, as a home would ship them, and returns the
// job's REST TLS keys naming them relative to dir.
func userStores(t *testing.T, dir string, a testAuthority) *flinkdist.Config {
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
	c := flinkdist.NewConfig()
	for k, v := range map[string]string{
		flinkdist.KeyRESTSSL: "true", keyRESTSSLAuth: "true",
		keyRESTKeyStore: "flink/conf/rest.p12", keyRESTStorePassword: "kspw",
		keyRESTTrustStore: "flink/conf/trust.p12", keyRESTTrustPassword: "tspw",
		keySSLAlgorithms: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
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

	conf.Set(keyRESTSSLAuth, "false")
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
		{"JKS content", map[string]string{keyRESTTrustStore: "flink/conf/trust.jks"}, "", `is a JKS store: yarn-am reads PKCS12 stores only; convert it with keytool`},
		{"no trust store", nil, keyRESTTrustStore, "security.ssl.rest.enabled = true needs security.ssl.rest.truststore"},
		{"no key store with authentication", nil, keyRESTKeyStore, "needs security.ssl.rest.keystore"},
		{"wrong password", map[string]string{keyRESTStorePassword: "nope"}, "", `security.ssl.rest.keystore = "` + filepath.Join(dir, "flink/conf/rest.p12") + `": not a PKCS12 key store that security.ssl.rest.keystore-password opens`},
		{"key password of its own", map[string]string{keyRESTKeyPassword: "other"}, "", "security.ssl.rest.key-password differs from security.ssl.rest.keystore-password"},
		{"no cipher suite Go has", map[string]string{keySSLAlgorithms: "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256"}, "", `security.ssl.algorithms = "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256": none of these cipher suites`},
		{"missing file", map[string]string{keyRESTTrustStore: "flink/conf/gone.p12"}, "", "gone.p12"},
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
	// Without client authentication the REST API is open: refused unless the job accepts it.
	open := conf.Clone()
	open.Set(keyRESTSSLAuth, "false")
	err := checkUserRESTTLS(open, false)
	if assert.Error(t, err, "own REST TLS without client authentication") {
		assert.Contains(t, err.Error(), "security.ssl.rest.enabled = true without security.ssl.rest.authentication-enabled = true")
		assert.Contains(t, err.Error(), "[flink] rest-tls-without-client-auth = true")
	}
	assert.NoError(t, checkUserRESTTLS(open, true), "accepted with [flink] rest-tls-without-client-auth = true")
	assert.NoError(t, checkUserRESTTLS(conf, false), "with client authentication nothing to accept")
	plain := flinkdist.NewConfig()
	assert.NoError(t, checkUserRESTTLS(plain, false), "no TLS of the job's own: nothing to check")
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
	fw, err := flinkFramework{}.StartAM(t.Context(), j, framework.AMStart{Host: "127.0.0.1", TLS: newTestAuthority(t), TrackingURL: "http://am:8088/"})
	require.NoError(t, err)
	assert.NotContains(t, fw.DriverEnv, envRESTTLS)
	_, err = os.Stat(filepath.Join(wd, restTLSDir))
	assert.ErrorIs(t, err, os.ErrNotExist, "no stores of the AM's")
	tr, ok := fw.Proxy.Transport.(*http.Transport)
	require.True(t, ok)
	assert.Len(t, tr.TLSClientConfig.Certificates, 1, "the job's key store")

	require.NoError(t, os.Remove(filepath.Join(wd, "flink/conf/trust.p12")))
	_, err = flinkFramework{}.StartAM(t.Context(), j, framework.AMStart{Host: "127.0.0.1", TLS: newTestAuthority(t)})
	assert.ErrorContains(t, err, "trust.p12", "a store the AM cannot read fails its start, naming it")
}

// withMACRounds re-encodes the PKCS12 store data with its MAC asking for n rounds of key derivation
// (the MAC itself left as it was: a reader does the rounds before it can tell).
func withMACRounds(t *testing.T, data []byte, n int) []byte {
	t.Helper()
	var pfx struct {
		Version  int
		AuthSafe asn1.RawValue
		MacData  struct {
			Mac        asn1.RawValue
			MacSalt    []byte
			Iterations int `asn1:"optional,default:1"`
		} `asn1:"optional"`
	}
	rest, err := asn1.Unmarshal(data, &pfx)
	require.NoError(t, err)
	require.Empty(t, rest)
	pfx.MacData.Iterations = n
	out, err := asn1.Marshal(pfx)
	require.NoError(t, err)
	return out
}

// A store of the job's own REST TLS that asks for more rounds of key derivation than Java reads
// (5,000,000) is refused before it is decoded, naming the key, the store and the count, at once: the
// decoder would do every round first (2³¹−1 kept flink-jobmanager busy for hours). The
// count is found in the MAC and inside the bags (a key's encryption); a store of ordinary counts
// reads as before.
func TestUserRESTClientRefusesAStoreOfTooManyRounds(t *testing.T) {
	dir := t.TempDir()
	conf := userStores(t, dir, newTestAuthority(t))
	trust := filepath.Join(dir, "flink/conf/trust.p12")
	keys := filepath.Join(dir, "flink/conf/rest.p12")
	good, err := os.ReadFile(trust)
	require.NoError(t, err)
	most, err := checkPKCS12Rounds(good)
	require.NoError(t, err)
	assert.Positive(t, most, "the walk finds the store's counts")

	try := func(t *testing.T) error {
		t.Helper()
		done := make(chan error, 1)
		go func() { _, err := userRESTClient(conf, dir); done <- err }()
		select {
		case err := <-done:
			return err
		case <-time.After(20 * time.Second):
			t.Fatal("userRESTClient still decoding the store after 20 s: it does the rounds the store asks for")
			return nil
		}
	}
	require.NoError(t, os.WriteFile(trust, withMACRounds(t, good, 1<<31-1), 0o600))
	err = try(t)
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), `security.ssl.rest.truststore = "`+trust+`"`)
		assert.Contains(t, err.Error(), "2147483647 rounds of key derivation, more than the 5000000 Java reads")
	}
	require.NoError(t, os.WriteFile(trust, withMACRounds(t, good, 5_000_000), 0o600))
	most, err = checkPKCS12Rounds(withMACRounds(t, good, 5_000_000))
	assert.NoError(t, err, "Java's own limit is allowed")
	assert.EqualValues(t, 5_000_000, most)
	require.NoError(t, os.WriteFile(trust, good, 0o600))

	// The key store's key is encrypted under its own count (PBKDF2's), inside the authenticated safe:
	// an encoder's count of 32768 (02 03 00 80 00) in its first place, the key's, made 8388607.
	cert, err := newTestAuthority(t).ClientCertificate("c")
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	require.NoError(t, err)
	ks, err := pkcs12.Modern.WithIterations(32768).Encode(cert.PrivateKey, leaf, nil, "kspw")
	require.NoError(t, err)
	count := []byte{2, 3, 0, 0x80, 0}
	require.GreaterOrEqual(t, bytes.Count(ks, count), 2, "the key's count and the MAC's")
	at := bytes.Index(ks, count)
	require.Less(t, at, bytes.LastIndex(ks, count), "the key's count comes before the MAC's")
	copy(ks[at:], []byte{2, 3, 0x7f, 0xff, 0xff})
	require.NoError(t, os.WriteFile(keys, ks, 0o600))
	err = try(t)
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), `security.ssl.rest.keystore = "`+keys+`"`)
		assert.Contains(t, err.Error(), "8388607 rounds")
	}
}
