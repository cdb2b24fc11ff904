//go:build integration && secure

package logs

import (
	"context"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// TestSecureLogs: on the Kerberized mini cluster (make minicluster-up-secure; source its env; make
// test-secure runs it at every hadoop.rpc.protection level) yarn-am logs logs in from the keytab,
// reads an ended application's logs over Kerberized HDFS (or, with aggregation off, from the
// NodeManagers), and a running one's from the NodeManagers' web services.
func TestSecureLogs(t *testing.T) {
	if os.Getenv("YARN_AM_SECURE") != "1" {
		t.Fatal("YARN_AM_SECURE is not 1: this test needs the Kerberized mini cluster (make test-secure starts it; or make minicluster-up-secure and source .minicluster/secure/env)")
	}
	e := integrationEnv(t)
	login := []string{"--principal", os.Getenv("YARN_AM_TEST_PRINCIPAL"), "--keytab", os.Getenv("YARN_AM_TEST_KEYTAB")}
	require.NotEmpty(t, login[1], "YARN_AM_TEST_PRINCIPAL")

	app, sub := submit(t, e, writeJob(t, e, "logs-secure", "./worker", 1), login...)
	require.Contains(t, sub, "final status SUCCEEDED", sub)
	var out, errOut string
	var code int
	deadline := time.Now().Add(90 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		out, errOut, code = yarnAM(ctx, e, nil, append([]string{"logs", app, "--file", "stdout"}, login...)...)
		cancel()
		if code == 0 && !strings.Contains(errOut, "still uploading") || time.Now().After(deadline) || code != 0 && !strings.Contains(errOut, "not aggregated yet") {
			break
		}
		time.Sleep(time.Second)
	}
	if e.aggregation {
		// A Kerberized NodeManager aggregates through SecureIOUtils, which needs Hadoop's native
		// library; the mini cluster has none, so the upload stops at <node>.tmp files, and the NMs
		// cannot serve the logs either. Both are reported as such.
		assert.Equal(t, 1, code, "stdout:\n%s", out)
		assert.Contains(t, errOut, "the NodeManagers did not finish uploading the logs of "+app)
		assert.Contains(t, errOut, ".tmp")
		// The Kerberized HDFS read path, proven with files a real NodeManager wrote: the committed
		// TFile fixture (another application's) is put where this application's logs belong, over
		// HDFS with the test user's Kerberos login, and must come out as Hadoop printed it.
		plantFixture(t, app)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		out, errOut, code = yarnAM(ctx, e, nil, append([]string{"logs", app}, login...)...)
		cancel()
		require.Equal(t, 0, code, "stderr:\n%s", errOut)
		want := oracleLogs(t, "testdata/tfile-3.4/yarn-logs.txt")
		assert.Equal(t, want, ourLogs(t, out))
	} else if strings.Contains(errOut, "SecureIOUtils, which needs Hadoop's native library") {
		// Aggregation off (the harness's default) and NodeManagers without the native library:
		// they cannot open the logs they keep, and that is what is said.
		assert.Equal(t, 1, code, "stdout:\n%s", out)
		assert.Contains(t, errOut, "log aggregation status DISABLED), and the NodeManagers that keep the logs of")
	} else {
		// Aggregation off, NodeManagers able to read their logs: their copies, over plain HTTP.
		require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
		assert.Equal(t, 2, strings.Count(out, "worker: gpu indexes from file="), out)
	}

	// Live, while it runs.
	app, _ = submit(t, e, writeJob(t, e, "logs-secure-live", "echo live line; sleep 600", 0), append([]string{"--detach"}, login...)...)
	defer yarnAM(context.Background(), e, nil, append([]string{"kill", app}, login...)...)
	deadline = time.Now().Add(90 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		out, errOut, code = yarnAM(ctx, e, nil, append([]string{"logs", app, "--file", "stdout"}, login...)...)
		cancel()
		if code == 0 && strings.Count(out, "live line") == 2 {
			break
		}
		// The Kerberized mini cluster's NodeManagers cannot open container logs (SecureIOUtils
		// without the native library): that must be what is said.
		if strings.Contains(errOut, "SecureIOUtils, which needs Hadoop's native library") {
			assert.Equal(t, 1, code)
			assert.Contains(t, errOut, "no log of "+app+" could be read")
			break
		}
		require.True(t, time.Now().Before(deadline), "no live stdout of both TaskExecutors within 90 s:\nstdout:\n%s\nstderr:\n%s", out, errOut)
		time.Sleep(time.Second)
	}
}

// plantFixture writes the committed TFile fixture files into app's 3.3+ log directory over HDFS as
// the Kerberos test user, replacing the NodeManagers' unfinished .tmp files.
func plantFixture(t *testing.T, app string) {
	t.Helper()
	sess, rm, err := client.Connect(client.LoginOptions{Principal: os.Getenv("YARN_AM_TEST_PRINCIPAL"), Keytab: os.Getenv("YARN_AM_TEST_KEYTAB")}, io.Discard)
	require.NoError(t, err)
	defer rm.Close()
	h, err := sess.DialStaging(sess.User)
	require.NoError(t, err)
	defer h.Close()
	id, err := yarnrpc.ParseApplicationID(app)
	require.NoError(t, err)
	dir := AppDirs(sess.Conf, sess.User, app, id.GetId())[0].Dir
	names, _ := filepath.Glob("testdata/tfile-3.4/127.0.0.*")
	require.Len(t, names, 2)
	for _, n := range names {
		b, err := os.ReadFile(n)
		require.NoError(t, err)
		w, err := h.Create(path.Join(dir, filepath.Base(n)), 0o640)
		require.NoError(t, err)
		_, err = w.Write(b)
		require.NoError(t, err)
		require.NoError(t, w.Close())
	}
	ents, err := h.Client.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			require.NoError(t, h.RemoveAll(path.Join(dir, e.Name())))
		}
	}
}
