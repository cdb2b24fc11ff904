package flink

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	pkcs12 "software.sslmate.com/src/go-pkcs12"

	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// This file puts a Flink job's internal connections under mutual TLS
// (docs/flink.md#who-can-reach-the-jobmanager): the JobManager's RPC port (Pekko), its blob server,
// and the TaskManagers' RPC and data-exchange (Netty) ports. The AM issues one certificate for both
// server and client authentication from the application's own authority and adds it, with its key,
// to the credentials of its driver (the JobManager) and of every TaskExecutor as a secret of its
// own (framework.AM.WorkerSecrets): the token file only the application's user reads, never an
// environment variable or a localised file. Each Flink process reads it from its token file and
// writes its PKCS12 key and trust stores (the authority alone as the trust) into its container's
// working directory, readable by the user alone, with a random password that only its own
// config.yaml (0600) holds. Flink's internal TLS is always mutual: a peer without a certificate of
// this application's authority gets no connection.

// secretInternalTLS is the alias, in the credentials of the JobManager and the TaskManagers, of the
// internal certificate, its chain and its key (PEM).
const secretInternalTLS = "yarn-am.flink-internal-tls"

// internalTLSDir is where a Flink process writes its internal stores, in its container's working
// directory.
const internalTLSDir = ".yarn-am-flink-internal-tls"

// Flink's keys of the internal TLS (SecurityOptions; the same in Flink 1.20 and 2.x).
const (
	keyInternalSSL             = "security.ssl.internal.enabled"
	keyInternalKeyStore        = "security.ssl.internal.keystore"
	keyInternalTrustStore      = "security.ssl.internal.truststore"
	keyInternalStorePassword   = "security.ssl.internal.keystore-password"
	keyInternalKeyPassword     = "security.ssl.internal.key-password"
	keyInternalTrustPassword   = "security.ssl.internal.truststore-password"
	keyInternalKeyStoreType    = "security.ssl.internal.keystore-type"
	keyInternalTrustStoreType  = "security.ssl.internal.truststore-type"
	keyInternalCertFingerprint = "security.ssl.internal.cert.fingerprint"
)

// internalTLSKeys are the keys yarn-am sets with [flink] internal-tls on, which the user may not set
// then (checkInternalTLSKeys). Flink's tuning keys of the internal TLS (session cache, timeouts)
// stay the user's; Flink 1.x's deprecated umbrella key, which only stands in for an unset
// security.ssl.internal.enabled, changes nothing once yarn-am sets that.
var internalTLSKeys = []string{keyInternalSSL, keyInternalKeyStore, keyInternalTrustStore, keyInternalStorePassword,
	keyInternalKeyPassword, keyInternalTrustPassword, keyInternalKeyStoreType, keyInternalTrustStoreType,
	keyInternalCertFingerprint}

// internalSecret issues the internal certificate (StartAM): its chain (the authority last) and its
// key as PEM, the secret every Flink process of the job gets.
func internalSecret(a framework.Authority) ([]byte, error) {
	if a == nil {
		return nil, errors.New("the AM has no TLS authority to put the Flink job's internal connections under TLS with ([flink] internal-tls = false turns it off)")
	}
	c, err := a.PeerCertificate("yarn-am flink internal")
	if err != nil {
		return nil, fmt.Errorf("the Flink job's internal certificate: %w", err)
	}
	return certificatePEM(c)
}

// checkInternalTLSKeys refuses the user's own keys of the internal TLS while yarn-am sets them: a
// store or a password of theirs would be replaced without a word, and internal TLS turned off
// would leave the job's ports open with [flink] internal-tls on.
func checkInternalTLSKeys(c *flinkdist.Config, on bool) error {
	if !on {
		return nil
	}
	for _, k := range internalTLSKeys {
		if v, ok := c.Get(k); ok {
			return fmt.Errorf("%s = %s: yarn-am puts the Flink job's internal connections under mutual TLS itself, with certificates of the application's own authority; leave %s out, or set [flink] internal-tls = false to configure Flink's internal TLS yourself", k, shownValue(k, v), k)
		}
	}
	return nil
}

// shownValue is v bounded, or a mask for a password.
func shownValue(k, v string) string {
	if strings.Contains(k, "password") {
		return "(a password, not shown)"
	}
	return bounded(v)
}

// readInternalSecret reads the internal certificate from the process's token file.
func readInternalSecret(tokenFile string) ([]byte, error) {
	if tokenFile == "" {
		return nil, errors.New("HADOOP_TOKEN_FILE_LOCATION is not set: the Flink job's internal TLS certificate comes in the container's token file, which YARN names there")
	}
	creds, err := yarnrpc.ReadCredentialsFile(tokenFile)
	if err != nil {
		return nil, err
	}
	b := creds.Secrets[secretInternalTLS]
	if len(b) == 0 {
		return nil, fmt.Errorf("the token file %s has no secret %q: the AM puts the Flink job's internal TLS certificate there unless [flink] internal-tls = false", tokenFile, secretInternalTLS)
	}
	return b, nil
}

// writeInternalTLS writes the key store (the certificate, its chain and key) and the trust store
// (the authority alone) of secret into dir (0700; files 0600) with a random password, and returns
// the Flink keys that use them.
func writeInternalTLS(dir string, secret []byte) (map[string]string, error) {
	var chain []*x509.Certificate
	var keyDER []byte
	for rest := secret; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		switch b.Type {
		case "CERTIFICATE":
			c, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("the Flink job's internal certificate: %w", err)
			}
			chain = append(chain, c)
		case "PRIVATE KEY":
			keyDER = b.Bytes
		}
	}
	if len(chain) < 2 || keyDER == nil {
		return nil, fmt.Errorf("the secret %q holds no certificate, authority and key", secretInternalTLS)
	}
	key, err := x509.ParsePKCS8PrivateKey(keyDER)
	if err != nil {
		return nil, fmt.Errorf("the Flink job's internal key: %w", err)
	}
	ca := chain[len(chain)-1]
	pw := make([]byte, 24)
	if _, err := rand.Read(pw); err != nil {
		return nil, err
	}
	password := hex.EncodeToString(pw)
	// LegacyDES as the REST stores (resttls.go says why).
	keyStore, err := pkcs12.LegacyDES.Encode(key, chain[0], chain[1:], password)
	if err != nil {
		return nil, fmt.Errorf("the Flink job's internal key store: %w", err)
	}
	trustStore, err := pkcs12.LegacyDES.EncodeTrustStore([]*x509.Certificate{ca}, password)
	if err != nil {
		return nil, fmt.Errorf("the Flink job's internal trust store: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, err
	}
	ks, ts := filepath.Join(dir, "keystore.p12"), filepath.Join(dir, "truststore.p12")
	if err := writePrivate(ks, keyStore); err != nil {
		return nil, err
	}
	if err := writePrivate(ts, trustStore); err != nil {
		return nil, err
	}
	return map[string]string{
		keyInternalSSL: "true", keyInternalKeyStore: ks, keyInternalTrustStore: ts,
		keyInternalStorePassword: password, keyInternalKeyPassword: password, keyInternalTrustPassword: password,
		keyInternalKeyStoreType: "PKCS12", keyInternalTrustStoreType: "PKCS12",
	}, nil
}

// internalTLS sets up the process's internal TLS when [flink] internal-tls is on: its stores from
// the token file, the keys in conf, and the cipher suites of the authority's ECDSA certificates
// among Flink's (security.ssl.algorithms serves both the internal and the REST TLS).
func internalTLS(s *flinkSetup, tokenFile string) error {
	if !s.spec.InternalTLS {
		return nil
	}
	secret, err := readInternalSecret(tokenFile)
	if err != nil {
		return err
	}
	keys, err := writeInternalTLS(filepath.Join(s.dir, internalTLSDir), secret)
	if err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		s.conf.Set(k, keys[k])
	}
	addCipherSuites(s.conf)
	// Flink 2's Netty (4.2) checks, by default, that a server's certificate names the host its client
	// dialled, and Flink sets that check only for REST; a TaskManager's data client would then refuse
	// the other TaskManagers' certificate, which names no host (every process has the same one, and
	// where TaskManagers run is not known when the AM issues it). The trust store admits this
	// application's authority alone, so the host adds nothing: the JVMs turn Netty's default off
	// (Flink 1.x's Netty 4.1 has no such default and ignores the property).
	opts, _ := s.conf.Get(flinkdist.KeyJavaDefaultOpts)
	s.conf.Set(flinkdist.KeyJavaDefaultOpts, strings.TrimSpace(opts+" -D"+nettyEndpointVerification+"=NONE"))
	return nil
}

// nettyEndpointVerification is the system property of Flink's shaded Netty whose NONE turns off the
// host name check its clients make by default (Netty 4.2, in Flink 2).
const nettyEndpointVerification = "org.apache.flink.shaded.netty4.io.netty.handler.ssl.defaultEndpointVerificationAlgorithm"
