package flink

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	pkcs12 "software.sslmate.com/src/go-pkcs12"

	"github.com/yarn-am/yarn-am/contract/amtls"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/jobfile"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// tokenFileWith writes a token file holding secrets, as YARN localises a container's credentials.
func tokenFileWith(t *testing.T, secrets map[string][]byte) string {
	t.Helper()
	c := yarnrpc.NewCredentials()
	for k, v := range secrets {
		c.Secrets[k] = v
	}
	p := filepath.Join(t.TempDir(), "container_tokens")
	require.NoError(t, c.WriteFile(p))
	return p
}

// storeConfig is a TLS configuration from the stores a Flink process got, as Flink's internal TLS
// uses them: its certificate, the trust store's authority alone, and a peer's certificate required.
func storeConfig(t *testing.T, keys map[string]string) *tls.Config {
	t.Helper()
	ks, err := os.ReadFile(keys[keyInternalKeyStore])
	require.NoError(t, err)
	key, leaf, chain, err := pkcs12.DecodeChain(ks, keys[keyInternalStorePassword])
	require.NoError(t, err)
	ts, err := os.ReadFile(keys[keyInternalTrustStore])
	require.NoError(t, err)
	trusted, err := pkcs12.DecodeTrustStore(ts, keys[keyInternalTrustPassword])
	require.NoError(t, err)
	pool := x509.NewCertPool()
	for _, c := range trusted {
		pool.AddCert(c)
	}
	cert := tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key, Leaf: leaf}
	for _, c := range chain {
		cert.Certificate = append(cert.Certificate, c.Raw)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert, ServerName: leaf.Subject.CommonName,
		// Flink's internal TLS verifies the chain, not the host name: every process has the one certificate.
		InsecureSkipVerify: true, VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			c, err := x509.ParseCertificate(raw[0])
			if err != nil {
				return err
			}
			_, err = c.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
			return err
		}}
}

// handshake runs a TLS handshake between a client and a server configuration over a pipe.
func handshake(client, server *tls.Config) error {
	a, b := net.Pipe()
	defer b.Close()
	done := make(chan error, 1)
	go func() { done <- tls.Server(b, server).Handshake() }()
	cerr := tls.Client(a, client).Handshake()
	a.Close() // a server that refuses after the client's last flight (TLS 1.3) writes its alert to nobody
	serr := <-done
	if serr != nil {
		return serr
	}
	return cerr
}

// The AM's one internal certificate reaches a Flink process in its token file; the process writes
// PKCS12 stores readable by the user alone (the directory 0700, the files 0600, a random password
// that is in the keys only) and sets Flink's internal TLS keys to them and the authority's cipher
// suites. Two processes with those stores complete a mutual handshake each way (the certificate is
// for server and client authentication); one with a certificate of another authority does not.
func TestInternalTLSStoresAndKeys(t *testing.T) {
	a := newTestAuthority(t)
	secret, err := internalSecret(a)
	require.NoError(t, err)
	tokens := tokenFileWith(t, map[string][]byte{secretInternalTLS: secret, "yarn-am.secret": []byte("s")})

	setup := func() *flinkSetup {
		return &flinkSetup{spec: &flinkSpec{InternalTLS: true}, conf: flinkdist.NewConfig(), dir: t.TempDir()}
	}
	s := setup()
	require.NoError(t, internalTLS(s, tokens))
	dir := filepath.Join(s.dir, internalTLSDir)
	st, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), st.Mode().Perm(), "the directory")
	keys := map[string]string{}
	for _, k := range internalTLSKeys {
		if v, ok := s.conf.Get(k); ok {
			keys[k] = v
		}
	}
	pw := keys[keyInternalStorePassword]
	require.Len(t, pw, 48, "a random password of 24 bytes")
	assert.Equal(t, map[string]string{
		"security.ssl.internal.enabled":  "true",
		"security.ssl.internal.keystore": filepath.Join(dir, "keystore.p12"), "security.ssl.internal.truststore": filepath.Join(dir, "truststore.p12"),
		"security.ssl.internal.keystore-password": pw, "security.ssl.internal.key-password": pw, "security.ssl.internal.truststore-password": pw,
		"security.ssl.internal.keystore-type": "PKCS12", "security.ssl.internal.truststore-type": "PKCS12",
	}, keys, "no fingerprint: the trust store holds the application's authority alone")
	algs, _ := s.conf.Get(keySSLAlgorithms)
	assert.Equal(t, strings.Join(restCipherSuites, ","), algs, "the suites of the authority's ECDSA certificates")
	opts, _ := s.conf.Get(flinkdist.KeyJavaDefaultOpts)
	assert.Equal(t, "-Dorg.apache.flink.shaded.netty4.io.netty.handler.ssl.defaultEndpointVerificationAlgorithm=NONE", opts,
		"Flink 2's Netty checks no host name in the one certificate")
	for _, f := range []string{"keystore.p12", "truststore.p12"} {
		st, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), f)
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		assert.NotContains(t, string(b), pw, "the password is not beside the stores")
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "the stores only")

	ks, err := os.ReadFile(keys[keyInternalKeyStore])
	require.NoError(t, err)
	_, leaf, chain, err := pkcs12.DecodeChain(ks, pw)
	require.NoError(t, err)
	assert.ElementsMatch(t, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, leaf.ExtKeyUsage)
	ca, err := amtls.ParseCertificate(a.cert)
	require.NoError(t, err)
	require.Len(t, chain, 1)
	assert.True(t, chain[0].Equal(ca))
	ts, err := os.ReadFile(keys[keyInternalTrustStore])
	require.NoError(t, err)
	trusted, err := pkcs12.DecodeTrustStore(ts, pw)
	require.NoError(t, err)
	require.Len(t, trusted, 1)
	assert.True(t, trusted[0].Equal(ca), "the trust store holds the authority alone")

	// A second process (a TaskManager of the same job) and a stranger of another authority.
	s2 := setup()
	require.NoError(t, internalTLS(s2, tokens))
	keys2 := map[string]string{}
	for _, k := range internalTLSKeys {
		keys2[k], _ = s2.conf.Get(k)
	}
	assert.NotEqual(t, pw, keys2[keyInternalStorePassword], "each process has its own password")
	jm, tm := storeConfig(t, keys), storeConfig(t, keys2)
	assert.NoError(t, handshake(tm, jm), "a TaskManager to the JobManager")
	assert.NoError(t, handshake(jm, tm), "the JobManager to a TaskManager")

	other := newTestAuthority(t)
	otherSecret, err := internalSecret(other)
	require.NoError(t, err)
	s3 := setup()
	require.NoError(t, internalTLS(s3, tokenFileWith(t, map[string][]byte{secretInternalTLS: otherSecret})))
	keys3 := map[string]string{}
	for _, k := range internalTLSKeys {
		keys3[k], _ = s3.conf.Get(k)
	}
	stranger := storeConfig(t, keys3)
	assert.Error(t, handshake(stranger, jm), "another authority's certificate")
	noCert := jm.Clone()
	noCert.Certificates = nil
	assert.Error(t, handshake(noCert, jm), "no certificate")
}

// With [flink] internal-tls = false a process writes and sets nothing; with it on, a token file
// without the certificate is an error that names the secret and the key that turns it off.
func TestInternalTLSOffAndMissing(t *testing.T) {
	s := &flinkSetup{spec: &flinkSpec{InternalTLS: false}, conf: flinkdist.NewConfig(), dir: t.TempDir()}
	require.NoError(t, internalTLS(s, ""))
	_, set := s.conf.Get(keyInternalSSL)
	assert.False(t, set)
	_, err := os.Stat(filepath.Join(s.dir, internalTLSDir))
	assert.True(t, os.IsNotExist(err))

	s.spec.InternalTLS = true
	err = internalTLS(s, tokenFileWith(t, map[string][]byte{"yarn-am.secret": []byte("s")}))
	assert.ErrorContains(t, err, `no secret "yarn-am.flink-internal-tls"`)
	assert.ErrorContains(t, err, "[flink] internal-tls = false")
	assert.ErrorContains(t, internalTLS(s, ""), "HADOOP_TOKEN_FILE_LOCATION is not set")
	assert.ErrorContains(t, internalTLS(s, tokenFileWith(t, map[string][]byte{secretInternalTLS: []byte("junk")})), "holds no certificate")
}

// The user's own keys of Flink's internal TLS are refused while yarn-am sets them, naming the key,
// its value (a password masked) and [flink] internal-tls = false; the tuning keys stay the user's,
// and with internal-tls off every key is theirs.
func TestCheckInternalTLSKeys(t *testing.T) {
	c := flinkdist.NewConfig()
	c.Set("security.ssl.internal.handshake-timeout", "20000")
	assert.NoError(t, checkInternalTLSKeys(c, true))
	c.Set("security.ssl.internal.keystore-password", "hunter2")
	err := checkInternalTLSKeys(c, true)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "security.ssl.internal.keystore-password = (a password, not shown)")
	assert.NotContains(t, err.Error(), "hunter2")
	assert.Contains(t, err.Error(), "[flink] internal-tls = false")
	assert.NoError(t, checkInternalTLSKeys(c, false))
	c = flinkdist.NewConfig()
	c.Set("security.ssl.internal.enabled", "false")
	assert.ErrorContains(t, checkInternalTLSKeys(c, true), "security.ssl.internal.enabled = false: yarn-am puts")
}

// StartAM issues the internal certificate into WorkerSecrets (the credentials of the JobManager and
// every TaskManager), never into an environment; with [flink] internal-tls = false it issues none.
func TestStartAMShipsTheInternalCertificateAsASecret(t *testing.T) {
	for _, on := range []bool{true, false} {
		body := "[flink]\nhome = \"flink\"\njar = \"job.jar\"\n"
		if !on {
			body += "internal-tls = false\n"
		}
		p := writeJob(t, body)
		fakeFlinkHome(t, filepath.Dir(p))
		j, err := jobfile.LoadJob(p)
		require.NoError(t, err)
		t.Chdir(t.TempDir())
		fw, err := flinkFramework{}.StartAM(context.Background(), j, framework.AMStart{Host: "127.0.0.1", TLS: newTestAuthority(t)})
		require.NoError(t, err)
		if !on {
			assert.Empty(t, fw.WorkerSecrets)
			continue
		}
		require.Contains(t, fw.WorkerSecrets, secretInternalTLS)
		assert.Contains(t, string(fw.WorkerSecrets[secretInternalTLS]), "PRIVATE KEY")
		for _, env := range []map[string]string{fw.DriverEnv, fw.WorkerEnv} {
			for k, v := range env {
				assert.NotContains(t, v, "PRIVATE KEY", k)
			}
		}
	}
}
