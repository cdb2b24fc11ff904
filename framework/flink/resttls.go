package flink

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	pkcs12 "software.sslmate.com/src/go-pkcs12"

	"github.com/yarn-am/yarn-am/contract/amtls"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/internal/boundedread"
)

// This file closes the JobManager's REST API to everyone but the AM and its driver
// (docs/flink.md#who-can-reach-the-jobmanager): Flink's REST TLS with mutual authentication, the
// server's certificate and the only client certificate issued by an authority of the REST API's own,
// which the AM makes for each JobManager and forgets once it issued both. Not the application's
// authority: every TaskExecutor holds a certificate of that one for the job's internal TLS
// (internaltls.go), with client authentication among its uses, and a REST server that trusted the
// application's authority took it as the AM's (TestRESTRefusesTheTaskExecutorsPeerCertificate). The AM writes the stores in its
// container's working directory, readable by the application's user alone; the driver sets Flink's
// keys to them. Users reach the UI and the API through the AM (framework.AM.Proxy), which forwards a
// write only with the application secret.

// envRESTTLS is the directory in the AM container where the AM wrote the JobManager's REST TLS
// (restTLSDir), set in the driver's environment only.
const envRESTTLS = "YARN_AM_FLINK_REST_TLS"

// restTLSDir is that directory, in the AM container's working directory.
const restTLSDir = ".yarn-am-flink-rest-tls"

// The files in it: Flink's key and trust stores (PKCS12, which Java 17 reads as its default type),
// their password, and the client's certificate and key (PEM) with the authority's certificate for
// the driver's own REST client.
const (
	restKeyStore   = "keystore.p12"
	restTrustStore = "truststore.p12"
	restPassword   = "password"
	restClientPEM  = "client.pem"
	restCAPEM      = "ca.pem"
)

// Flink's keys of the REST endpoint's TLS (docs/flink.md#who-can-reach-the-jobmanager).
const (
	keyRESTSSLAuth       = "security.ssl.rest.authentication-enabled"
	keyRESTKeyStore      = "security.ssl.rest.keystore"
	keyRESTTrustStore    = "security.ssl.rest.truststore"
	keySSLAlgorithms     = "security.ssl.algorithms"
	keyWebSubmit         = "web.submit.enable"
	keyRESTStorePassword = "security.ssl.rest.keystore-password"
	keyRESTKeyPassword   = "security.ssl.rest.key-password"
	keyRESTTrustPassword = "security.ssl.rest.truststore-password"
	keyRESTKeyStoreType  = "security.ssl.rest.keystore-type"
	keyRESTTrustType     = "security.ssl.rest.truststore-type"
)

// restCipherSuites are the suites of the AM's ECDSA certificates: Flink's default
// (TLS_RSA_WITH_AES_128_CBC_SHA256) needs an RSA key and RSA key exchange, which Go's TLS no longer
// offers by default.
var restCipherSuites = []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"}

// restTLS is the REST TLS of one job's JobManager, as the AM made it.
type restTLS struct {
	dir    string
	client *tls.Config // the AM's client: trusts the REST authority only, presents the client certificate
	// caPEM is the REST API's own authority (the trust store's one certificate), server the
	// JobManager's certificate it issued.
	caPEM  []byte
	server tls.Certificate
}

// writeRESTTLS makes the REST API's own authority, issues the JobManager's server certificate (for
// host and loopback) and the one client certificate from it, and writes them into dir (0700; files
// 0600) with a random password. The authority's key is not kept: nothing else is ever issued.
func writeRESTTLS(dir, host string) (*restTLS, error) {
	caPEM, caKey, err := amtls.NewAuthority("yarn-am flink REST " + host)
	if err != nil {
		return nil, fmt.Errorf("the JobManager's REST authority: %w", err)
	}
	server, err := amtls.Issue(caPEM, caKey, x509.ExtKeyUsageServerAuth, host, "127.0.0.1", "localhost")
	if err != nil {
		return nil, fmt.Errorf("the JobManager's REST certificate: %w", err)
	}
	client, err := amtls.ClientCertificate(caPEM, caKey, "yarn-am flink client")
	if err != nil {
		return nil, fmt.Errorf("the JobManager's REST client certificate: %w", err)
	}
	ca, err := amtls.ParseCertificate(caPEM)
	if err != nil {
		return nil, err
	}
	pw := make([]byte, 24)
	if _, err := rand.Read(pw); err != nil {
		return nil, err
	}
	password := hex.EncodeToString(pw)
	// LegacyDES (3DES, a SHA-1 MAC) because every JVM a Flink 1.20 runs on reads it, a Java 8 before
	// 8u301 included ([flink] java-home), and the password beside the stores (same owner, same mode)
	// leaves a stronger cipher nothing more to protect.
	keyStore, err := pkcs12.LegacyDES.Encode(server.PrivateKey, server.Leaf, []*x509.Certificate{ca}, password)
	if err != nil {
		return nil, fmt.Errorf("the JobManager's key store: %w", err)
	}
	trustStore, err := pkcs12.LegacyDES.EncodeTrustStore([]*x509.Certificate{ca}, password)
	if err != nil {
		return nil, fmt.Errorf("the JobManager's trust store: %w", err)
	}
	clientPEM, err := certificatePEM(client)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o700); err != nil { // an existing one (a later attempt) too
		return nil, err
	}
	for name, b := range map[string][]byte{restKeyStore: keyStore, restTrustStore: trustStore,
		restPassword: []byte(password), restClientPEM: clientPEM, restCAPEM: caPEM} {
		if err := writePrivate(filepath.Join(dir, name), b); err != nil {
			return nil, err
		}
	}
	cfg, err := amtls.ClientConfig(caPEM)
	if err != nil {
		return nil, err
	}
	cfg.Certificates = []tls.Certificate{client}
	return &restTLS{dir: dir, client: cfg, caPEM: caPEM, server: server}, nil
}

// writePrivate writes b to path readable by its owner alone, replacing what is there.
func writePrivate(path string, b []byte) error {
	_ = os.Remove(path) // WriteFile keeps an existing file's mode
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// certificatePEM is c's chain and key as PEM.
func certificatePEM(c tls.Certificate) ([]byte, error) {
	var b []byte
	for _, der := range c.Certificate {
		b = append(b, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	k, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
	if err != nil {
		return nil, err
	}
	return append(b, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: k})...), nil
}

// maxRESTTLSFile bounds each file read back from the directory (a few KiB).
const maxRESTTLSFile = 64 << 10

// readRESTTLS reads the directory the AM wrote (envRESTTLS) back: the Flink keys that close the
// JobManager's REST API and the driver's client configuration.
func readRESTTLS(dir string) (keys map[string]string, client *tls.Config, err error) {
	read := func(name string) ([]byte, error) {
		return boundedread.ReadFile("the JobManager's REST TLS file", filepath.Join(dir, name), "the file the AM wrote", maxRESTTLSFile)
	}
	pw, err := read(restPassword)
	if err != nil {
		return nil, nil, fmt.Errorf("%s=%q: %w", envRESTTLS, dir, err)
	}
	clientPEM, err := read(restClientPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("%s=%q: %w", envRESTTLS, dir, err)
	}
	caPEM, err := read(restCAPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("%s=%q: %w", envRESTTLS, dir, err)
	}
	cert, err := tls.X509KeyPair(clientPEM, clientPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, restClientPEM), err)
	}
	client, err = amtls.ClientConfig(caPEM)
	if err != nil {
		return nil, nil, err
	}
	client.Certificates = []tls.Certificate{cert}
	password := strings.TrimSpace(string(pw))
	keys = map[string]string{
		flinkdist.KeyRESTSSL: "true", keyRESTSSLAuth: "true",
		keyRESTKeyStore: filepath.Join(dir, restKeyStore), keyRESTTrustStore: filepath.Join(dir, restTrustStore),
		keyRESTStorePassword: password, keyRESTKeyPassword: password, keyRESTTrustPassword: password,
		keyRESTKeyStoreType: "PKCS12", keyRESTTrustType: "PKCS12",
	}
	return keys, client, nil
}

// closeREST sets the Flink keys that close the JobManager's REST API (readRESTTLS's) in conf, the
// cipher suites of the AM's certificates among the configured ones, and web.submit.enable from
// [flink] web-submit.
func closeREST(conf *flinkdist.Config, keys map[string]string, webSubmit bool) {
	for k, v := range keys {
		conf.Set(k, v)
	}
	addCipherSuites(conf)
	conf.Set(keyWebSubmit, fmt.Sprint(webSubmit))
}

// addCipherSuites adds the suites of the AM's certificates to the configured ones
// (security.ssl.algorithms, of both Flink's REST and internal TLS).
func addCipherSuites(conf *flinkdist.Config) {
	if v, ok := conf.Get(keySSLAlgorithms); ok && strings.TrimSpace(v) != "" {
		have := strings.Split(v, ",")
		for i := range have {
			have[i] = strings.TrimSpace(have[i])
		}
		for _, s := range restCipherSuites {
			if !containsFold(have, s) {
				have = append(have, s)
			}
		}
		conf.Set(keySSLAlgorithms, strings.Join(have, ","))
	} else {
		conf.Set(keySSLAlgorithms, strings.Join(restCipherSuites, ","))
	}
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// restClient is an HTTP client of the JobManager's REST API with cfg (the client certificate).
func restClient(cfg *tls.Config, timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: restTransport(cfg)}
}

// restTransport reaches the JobManager only, never through an HTTP proxy of the environment.
func restTransport(cfg *tls.Config) *http.Transport {
	return &http.Transport{
		TLSClientConfig: cfg, Proxy: nil,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: time.Minute,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       time.Minute,
	}
}
