//go:build integration

package flink_test

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/internal/hdfsfile"
	"github.com/yarn-am/yarn-am/testkit/e2e"
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
	}, time.Minute, time.Second, "the JobManager's bound REST port in the AM's stdout:\n%s", e2e.ContainerLogs(id))
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

	// The NodeManager writes a container's token file (HADOOP_TOKEN_FILE_LOCATION) beside its launch
	// script, <local dir>/nmPrivate/<app>/<container>/<container>.tokens.
	var tokens []string
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOCAL_DIRS"), ",") {
		files, _ := filepath.Glob(filepath.Join(d, "nmPrivate", id, "container_*", "container_*.tokens"))
		for _, f := range files {
			if !strings.HasSuffix(f, "_000001.tokens") {
				tokens = append(tokens, f)
			}
		}
	}
	require.NotEmpty(t, tokens, "a TaskExecutor's token file")
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

// appPIDs are the processes whose command line names the application's number (its containers' log
// and working directories are in every JVM's and launcher's).
func appPIDs(num string) []string {
	var pids []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), num) {
			pids = append(pids, filepath.Base(filepath.Dir(p)))
		}
	}
	return pids
}

// openInTmp returns the files and working directories the application's processes hold under
// /tmp, but for the mini cluster's own directories (which a checkout under /tmp puts there) and the
// JDK's performance data (/tmp/hsperfdata_<user>).
func openInTmp(num string) []string {
	var ours []string
	for _, env := range []string{"YARN_AM_NM_LOCAL_DIRS", "YARN_AM_NM_LOG_DIRS"} {
		for _, d := range strings.Split(os.Getenv(env), ",") {
			if d != "" {
				ours = append(ours, d+"/")
			}
		}
	}
	var found []string
	for _, pid := range appPIDs(num) {
		links, _ := filepath.Glob(filepath.Join("/proc", pid, "fd", "*"))
		links = append(links, filepath.Join("/proc", pid, "cwd"))
		for _, l := range links {
			target, err := os.Readlink(l)
			if err != nil || !strings.HasPrefix(target, "/tmp/") || strings.HasPrefix(target, "/tmp/hsperfdata_") {
				continue
			}
			mine := false
			for _, o := range ours {
				mine = mine || strings.HasPrefix(target, o)
			}
			if !mine {
				found = append(found, pid+": "+target)
			}
		}
	}
	return found
}

// nothingOfTheJobInTmp (docs/flink.md#private-directories): while the application runs, none of its
// processes holds a file or a working directory in the node's /tmp (the RPC system's jar a JVM keeps
// open, its working directory, its blob store's files); then it kills the application, waits until
// none of its processes is left, and finds no new entry of /tmp that names the application
// (tm_<container id>, what Flink left there before). before is /tmp's names before the submit. The
// count of new entries, and any that look like Flink's, are logged: other programs of a shared
// machine add some, which nothing ties to this application (make test runs the Flink tests one
// after the other).
func nothingOfTheJobInTmp(t *testing.T, id string, before map[string]bool) {
	t.Helper()
	num := strings.TrimPrefix(id, "application_")
	require.NotEmpty(t, appPIDs(num), "the application's processes are running")
	assert.Empty(t, openInTmp(num), "the application's processes hold files in the node's /tmp")
	r := e2e.YarnAM(t, 3*time.Minute, "kill", id)
	require.Equal(t, 0, r.Code, "kill:\n%s", r)
	require.Eventually(t, func() bool { return len(appPIDs(num)) == 0 }, 2*time.Minute, 500*time.Millisecond,
		"the application's processes ended")
	var added, flinkLike, job []string
	for n := range tmpNames(t) {
		if before[n] {
			continue
		}
		added = append(added, n)
		if strings.Contains(n, num) {
			job = append(job, n)
		} else if flinkTmpName.MatchString(n) {
			flinkLike = append(flinkLike, n)
		}
	}
	t.Logf("/tmp: %d entries before, %d new after the application; Flink-like ones naming no application: %v", len(before), len(added), flinkLike)
	assert.Empty(t, job, "the application's files left in the node's /tmp")
}

// plantArchives writes, beside the archive a run made (archive, in the user's cache on HDFS), two
// archives as job code holding the user's HDFS token could: the made archive with one byte changed,
// named consistently (its identity and its own SHA-256) in the old unsigned form and in the signed
// form with a record of its own making, each with a newer time than the made one. It returns their
// names.
func plantArchives(t *testing.T, c *e2e.Cluster, archive string) []string {
	t.Helper()
	data := readHDFS(t, c, archive)
	data[len(data)/3] ^= 0xff
	sum := sha256.Sum256(data)
	m := cdsArchiveName.FindStringSubmatch(path.Base(archive))
	require.NotNil(t, m, "the made archive's name %s", path.Base(archive))
	names := []string{
		m[1] + "." + hex.EncodeToString(sum[:]) + ".jsa",
		m[1] + "." + hex.EncodeToString(sum[:]) + "." + m[3] + "." + strings.Repeat("0", 32) + ".jsa",
	}
	later := time.Now().Add(time.Hour)
	for _, n := range names {
		p := path.Join(path.Dir(archive), n)
		w, err := c.FS.Create(p)
		require.NoError(t, err)
		_, err = w.Write(data)
		require.NoError(t, err)
		require.NoError(t, hdfsfile.Close(w))
		require.NoError(t, c.FS.Chtimes(p, later, later), "newer than the made archive")
	}
	return names
}

// cdsArchiveName is an archive's name in the cache: identity, SHA-256, application, record.
var cdsArchiveName = regexp.MustCompile(`^(flink-\S+-jobmanager-[0-9a-f]{16})\.([0-9a-f]{64})\.(application_\d+_\d+)\.([0-9a-f]{32})\.jsa$`)

// runWithPlantedArchives (docs/flink.md#class-data-sharing) plants two archives beside the one an
// earlier run made (plantArchives), submits job detached, and checks that submit takes the made
// archive and says it refused the planted two, that the AM's event says so in yarn-am status while
// the application runs, and that the application SUCCEEDS. It returns the application and submit's
// output.
func runWithPlantedArchives(t *testing.T, c *e2e.Cluster, job, archive string) (string, string) {
	t.Helper()
	planted := plantArchives(t, c, archive)
	start := time.Now()
	r := e2e.YarnAM(t, 2*time.Minute, "submit", "--detach", job)
	require.Equal(t, 0, r.Code, "submit --detach:\n%s", r)
	fields := strings.Fields(strings.TrimSpace(r.Stdout))
	id := fields[len(fields)-1]
	require.Regexp(t, `^application_\d+_\d+$`, id, r.String())
	t.Cleanup(func() { e2e.KillQuietly(id) })
	assert.Contains(t, r.Stdout, "class-data sharing: archive "+path.Base(archive)+" ", "submit takes the made archive, not a newer planted one")
	assert.Contains(t, r.Stdout, "class-data sharing: refused 2 archive(s) of the cache that hold no record your key made")
	for _, n := range planted {
		assert.NotContains(t, r.Stdout, "class-data sharing: archive "+n, "a planted archive taken")
	}
	var said bool
	var text string
	d := e2e.WaitFor(t, id, 6*time.Minute, "the application's end", func(d e2e.StatusDoc) bool {
		if !said && !e2e.IsEnded(d.Report.State) {
			s := e2e.YarnAM(t, time.Minute, "status", id)
			text = s.Stdout
			said = strings.Contains(s.Stdout, "class-data sharing: submit refused 2 archive(s)")
		}
		return e2e.IsEnded(d.Report.State)
	})
	assert.True(t, said, "yarn-am status names the refused archives while the application runs:\n%s", text)
	require.Equal(t, "SUCCEEDED", d.Report.FinalStatus, "%s\n%s", d.Report.Diagnostics, e2e.ContainerLogs(id))
	t.Logf("measured: run with planted archives: submit -> end %s (load %s)", time.Since(start).Round(time.Second), loadAvgE2E())
	all := appLogText(id)
	for _, n := range planted {
		assert.NotContains(t, all, n, "a planted archive reached a container")
	}
	return id, r.Stdout
}
