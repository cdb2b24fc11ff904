package flink

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	pkcs12 "software.sslmate.com/src/go-pkcs12"

	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/internal/boundedread"
	"github.com/yarn-am/yarn-am/internal/text"
)

// This file is the job's own REST TLS (docs/flink.md#your-own-rest-tls): with security.ssl.rest.enabled
// in the home's configuration or the job's keys, yarn-am leaves Flink's REST TLS as configured
// (its own stores, its own client authentication) instead of closing the API with the application's
// certificates (resttls.go), and the AM's and the driver's REST client use the configured stores:
// the trust store to check the JobManager's certificate, the key store as the client's certificate
// when security.ssl.rest.authentication-enabled is on. The stores are paths the containers read
// (in the localised home, ./flink/..., or a shipped file), PKCS12 only.

// maxStore bounds a key or trust store's read: a few certificates.
const maxStore = 1 << 20

// jksMagic starts a Java KeyStore (JKS) file.
var jksMagic = []byte{0xFE, 0xED, 0xFE, 0xED}

// userRESTTLS says whether the configuration turns on the REST API's TLS itself.
func userRESTTLS(conf *flinkdist.Config) bool {
	v, _ := conf.Get(flinkdist.KeyRESTSSL)
	return strings.EqualFold(strings.TrimSpace(v), "true")
}

func restAuth(conf *flinkdist.Config) bool {
	v, _ := conf.Get(keyRESTSSLAuth)
	return strings.EqualFold(strings.TrimSpace(v), "true")
}

// keyRESTWithoutClientAuth is the [flink] key with which a job accepts its own REST TLS without
// client authentication (docs/flink.md#your-own-rest-tls).
const keyRESTWithoutClientAuth = "rest-tls-without-client-auth"

// checkUserRESTTLS is the pre-flight of the job's own REST TLS, from the configuration alone (the
// stores are read where the containers see them, userRESTClient): a trust store, a key store when
// clients authenticate, PKCS12 types. Without client authentication the JobManager's REST API
// answers anyone who reaches its port, past the AM's proxy and its rules: refused unless the job
// says it accepts that (openOK, [flink] rest-tls-without-client-auth = true). nil when the TLS is not
// the job's own.
func checkUserRESTTLS(conf *flinkdist.Config, openOK bool) error {
	if !userRESTTLS(conf) {
		return nil
	}
	var errs []error
	if !restAuth(conf) && !openOK {
		errs = append(errs, fmt.Errorf("%s = true without %s = true: the JobManager's REST API would answer anyone who reaches its port, past the AM's proxy and its rules (a stranger could cancel the job, or run code in the JobManager); turn client authentication on (%s = true and %s), or accept an open REST API with [flink] %s = true (docs/flink.md#your-own-rest-tls)",
			flinkdist.KeyRESTSSL, keyRESTSSLAuth, keyRESTSSLAuth, keyRESTKeyStore, keyRESTWithoutClientAuth))
	}
	need := []string{keyRESTTrustStore}
	if restAuth(conf) {
		need = append(need, keyRESTKeyStore)
	}
	for _, k := range need {
		if v, _ := conf.Get(k); strings.TrimSpace(v) == "" {
			errs = append(errs, fmt.Errorf("%s = true needs %s: the AM's REST client reads it (PKCS12) to reach the JobManager (docs/flink.md#your-own-rest-tls)", flinkdist.KeyRESTSSL, k))
		}
	}
	for _, k := range []string{keyRESTKeyStoreType, keyRESTTrustType} {
		if v, ok := conf.Get(k); ok && !strings.EqualFold(strings.TrimSpace(v), "pkcs12") {
			errs = append(errs, fmt.Errorf("%s = %s: yarn-am reads PKCS12 stores only (Java 9's default type); convert a JKS store with keytool -importkeystore -deststoretype PKCS12 and set %s = PKCS12 or leave it out", k, text.Quote(v), k))
		}
	}
	return errors.Join(errs...)
}

// userRESTClient is the REST client's TLS of the job's own REST TLS: the configured trust store as
// its roots and, with client authentication, the configured key store's key and chain. Relative
// paths are from dir, the container's working directory (as the JobManager's JVM resolves them).
// Whether the job may run it without client authentication is checkUserRESTTLS's, before.
func userRESTClient(conf *flinkdist.Config, dir string) (*tls.Config, error) {
	if err := checkUserRESTTLS(conf, true); err != nil {
		return nil, err
	}
	path := func(k string) string {
		v, _ := conf.Get(k)
		v = strings.TrimSpace(v)
		if !filepath.IsAbs(v) {
			v = filepath.Join(dir, v)
		}
		return v
	}
	read := func(k string) ([]byte, error) {
		data, err := boundedread.ReadFile(k, path(k), "a PKCS12 store", maxStore)
		if err != nil {
			return nil, err
		}
		if bytes.HasPrefix(data, jksMagic) {
			return nil, fmt.Errorf("%s = %s is a JKS store: yarn-am reads PKCS12 stores only; convert it with keytool -importkeystore -srcstoretype JKS -deststoretype PKCS12", k, text.Quote(path(k)))
		}
		// Before any decoding: the decoder does every round the store asks for (pkcs12bound.go).
		if _, err := checkPKCS12Rounds(data); err != nil {
			return nil, fmt.Errorf("%s = %s: %v; re-create the store with at most %d rounds (keytool writes 10000, OpenSSL 2048)", k, text.Quote(path(k)), err, maxPKCS12Iterations)
		}
		return data, nil
	}
	password := func(k string) string { v, _ := conf.Get(k); return v }
	trustData, err := read(keyRESTTrustStore)
	if err != nil {
		return nil, err
	}
	roots, err := pkcs12.DecodeTrustStore(trustData, password(keyRESTTrustPassword))
	if err != nil {
		// A store of a key and its chain serves as a trust store too (Flink's docs use one file for both).
		_, leaf, chain, err2 := pkcs12.DecodeChain(trustData, password(keyRESTTrustPassword))
		if err2 != nil {
			return nil, fmt.Errorf("%s = %s: not a PKCS12 trust store that %s opens: %v", keyRESTTrustStore, text.Quote(path(keyRESTTrustStore)), keyRESTTrustPassword, err)
		}
		roots = append([]*x509.Certificate{leaf}, chain...)
	}
	if len(roots) == 0 {
		return nil, fmt.Errorf("%s = %s holds no certificate to trust", keyRESTTrustStore, text.Quote(path(keyRESTTrustStore)))
	}
	pool := x509.NewCertPool()
	for _, c := range roots {
		pool.AddCert(c)
	}
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	suites, err := cipherSuites(conf)
	if err != nil {
		return nil, err
	}
	cfg.CipherSuites = suites
	if restAuth(conf) {
		keyData, err := read(keyRESTKeyStore)
		if err != nil {
			return nil, err
		}
		pw := password(keyRESTStorePassword)
		if kp := password(keyRESTKeyPassword); kp != "" && kp != pw {
			return nil, fmt.Errorf("%s differs from %s: yarn-am reads a PKCS12 key store with one password; give the key the store's password", keyRESTKeyPassword, keyRESTStorePassword)
		}
		key, leaf, chain, err := pkcs12.DecodeChain(keyData, pw)
		if err != nil {
			return nil, fmt.Errorf("%s = %s: not a PKCS12 key store that %s opens: %v", keyRESTKeyStore, text.Quote(path(keyRESTKeyStore)), keyRESTStorePassword, err)
		}
		cert := tls.Certificate{PrivateKey: key, Leaf: leaf, Certificate: [][]byte{leaf.Raw}}
		for _, c := range chain {
			cert.Certificate = append(cert.Certificate, c.Raw)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// flinkDefaultAlgorithms is security.ssl.algorithms' default in Flink.
const flinkDefaultAlgorithms = "TLS_RSA_WITH_AES_128_CBC_SHA256"

// cipherSuites are the TLS 1.2 suites of security.ssl.algorithms (Flink's default when unset) that
// Go implements: the JobManager offers those alone, and Go's defaults leave out RSA key exchange.
func cipherSuites(conf *flinkdist.Config) ([]uint16, error) {
	v, ok := conf.Get(keySSLAlgorithms)
	if !ok || strings.TrimSpace(v) == "" {
		v = flinkDefaultAlgorithms
	}
	byName := map[string]uint16{}
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		byName[s.Name] = s.ID
	}
	var ids []uint16
	for _, name := range strings.Split(v, ",") {
		if id, ok := byName[strings.ToUpper(strings.TrimSpace(name))]; ok {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%s = %s: none of these cipher suites is one the AM's TLS implements; add one such as TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", keySSLAlgorithms, text.Quote(v))
	}
	return ids, nil
}
