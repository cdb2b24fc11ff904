//go:build integration

package am_test

import (
	"crypto/tls"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/yarnrpc"
)

// appContainerDirs returns the working directories of the application's containers on the mini
// cluster's NodeManagers (<local dir>/usercache/<user>/appcache/<app>/<container>), whose name ends
// with suffix ("" for all).
func appContainerDirs(id, suffix string) []string {
	var out []string
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOCAL_DIRS"), ",") {
		dirs, _ := filepath.Glob(filepath.Join(d, "usercache", "*", "appcache", id, "container_*"+suffix))
		out = append(out, dirs...)
	}
	return out
}

// restRefusesTaskExecutorsCertificate (docs/flink.md#who-can-reach-the-jobmanager): the JobManager's
// REST port answers the AM's client certificate (read from the AM container's REST TLS directory)
// and refuses the peer certificate a TaskExecutor holds for the internal TLS (read from its
// container's token file), which is of the application's authority and valid for client
// authentication: the REST API trusts an authority of its own.
func restRefusesTaskExecutorsCertificate(t *testing.T, id string) {
	t.Helper()
	var rest string
	require.Eventually(t, func() bool {
		if m := flinkRESTLine.FindStringSubmatch(amContainerFile(id, "am.stdout")); m != nil {
			rest = m[1]
		}
		return rest != ""
	}, time.Minute, time.Second, "the JobManager's bound REST port in the AM's stdout:\n%s", containerLogs(id))
	get := func(cert tls.Certificate) error {
		// The certificate is sent whatever authorities the server names, as job code would; TLS 1.2,
		// Flink's security.ssl.protocol, so that the refusal is the handshake's.
		cfg := &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12, // #nosec: the server's certificate is not what is tested
			GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }}
		c := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
		resp, err := c.Get("https://" + rest + "/config")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "flink-version") {
			return errAnswer
		}
		return nil
	}
	am := appContainerDirs(id, "_000001")
	require.Len(t, am, 1, "the AM container's directory")
	clientPEM, err := os.ReadFile(filepath.Join(am[0], ".yarn-am-flink-rest-tls", "client.pem"))
	require.NoError(t, err)
	amCert, err := tls.X509KeyPair(clientPEM, clientPEM)
	require.NoError(t, err)
	require.NoError(t, get(amCert), "the REST port answers the AM's client certificate (the port is the REST API's)")

	var tokens []string
	for _, d := range appContainerDirs(id, "") {
		if !strings.HasSuffix(d, "_000001") {
			tokens = append(tokens, filepath.Join(d, "container_tokens"))
		}
	}
	require.NotEmpty(t, tokens, "a TaskExecutor's container")
	creds, err := yarnrpc.ReadCredentialsFile(tokens[0])
	require.NoError(t, err)
	secret := creds.Secrets["yarn-am.flink-internal-tls"] // framework/flink's SecretInternalTLS
	require.NotEmpty(t, secret, "the TaskExecutor's internal TLS certificate in %s", tokens[0])
	peer, err := tls.X509KeyPair(secret, secret)
	require.NoError(t, err)
	err = get(peer)
	if assert.Error(t, err, "the REST port answered a TaskExecutor's peer certificate") {
		assert.Contains(t, err.Error(), "certificate", "refused for its certificate")
	}
}

// flinkTmpName is what a Flink process puts into its temporary directories (io.tmp.dirs,
// java.io.tmpdir): its working directory (tm_<resource id>, jm_<resource id>), blob stores, spill and
// shuffle files, the web server's uploads, the RPC system's jar, local state, RocksDB's library.
var flinkTmpName = regexp.MustCompile(`^(tm_|jm_|blobStore-|flink-|localState|rocksdb|librocksdbjni|pekko|akka)`)

// tmpNames lists the names in the node's /tmp.
func tmpNames(t *testing.T) map[string]bool {
	t.Helper()
	entries, err := os.ReadDir("/tmp")
	require.NoError(t, err)
	out := map[string]bool{}
	for _, e := range entries {
		out[e.Name()] = true
	}
	return out
}

// nothingOfTheJobInTmp (docs/flink.md#private-directories) kills the application, waits until no
// process of it is left on the node (their command lines name its log directories), and checks that
// /tmp holds nothing new of Flink's nor naming the application: its JVMs kept their files in the
// containers' own directories, which YARN removes with the application. before is /tmp's names
// before the submit. The count of new entries is logged: other programs of the machine may add
// some, and `make test` runs the tests one after the other.
func nothingOfTheJobInTmp(t *testing.T, id string, before map[string]bool) {
	t.Helper()
	r := yarnAM(t, 3*time.Minute, "kill", id)
	require.Equal(t, 0, r.code, "kill:\n%s", r)
	num := strings.TrimPrefix(id, "application_")
	require.Eventually(t, func() bool {
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), num) {
				return false
			}
		}
		return true
	}, 2*time.Minute, 500*time.Millisecond, "the application's processes ended")
	var added, job []string
	for n := range tmpNames(t) {
		if before[n] {
			continue
		}
		added = append(added, n)
		if flinkTmpName.MatchString(n) || strings.Contains(n, num) {
			job = append(job, n)
		}
	}
	t.Logf("/tmp: %d entries before, %d new after the application (%v)", len(before), len(added), added)
	assert.Empty(t, job, "Flink's files of the job left in the node's /tmp")
}
