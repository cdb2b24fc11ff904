//go:build integration && secure

package flink_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/testkit/e2e"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// TestFlinkTokensOutliveTheirLifetime (docs/flink.md#tokens-past-their-lifetime): a keytab job's
// Flink JVMs keep reaching HDFS past the maximum lifetime of the tokens they started with. On the
// Kerberized cluster with short token lifetimes (make test-secure-flink starts it with
// SECURE_FLINK_TOKENS: renewed every 30 s, dead after 60 s), a counter job checkpoints to HDFS every
// 5 s, the TaskManager writing its own state file each time, for five maximum lifetimes; Hadoop's
// connections close after 1 s idle (the job's flink.hadoop.ipc.client.connection.maxidletime), so each
// checkpoint authenticates to the NameNode again with the tokens the JVM holds then. Every checkpoint
// completes, the TaskManager received new tokens from the JobManager after each of the AM's
// replacements, and a stop with a savepoint succeeds at the end. On each tested Flink line, at once.
func TestFlinkTokensOutliveTheirLifetime(t *testing.T) {
	t.Parallel() // beside TestFlinkHDFSKerberized, in make test-secure-flink
	fsys, submitArgs := kerberizedFlink(t)
	conf, err := yarnrpc.LoadConfigFromEnv()
	require.NoError(t, err)
	life, err := conf.GetDuration("dfs.namenode.delegation.token.max-lifetime", time.Millisecond, 0)
	require.NoError(t, err)
	require.True(t, life > 0 && life <= 90*time.Second, "dfs.namenode.delegation.token.max-lifetime = %s: this test wants the cluster started with short token lifetimes (make test-secure-flink starts it with %s)", life, "TOKEN_RENEW_SEC=30 TOKEN_MAX_LIFETIME_SEC=60")
	eachFlinkAtOnce(t, func(t *testing.T, v flinkVersion) {
		flinkTokensOutliveTheirLifetime(t, v, fsys, submitArgs, life)
	})
}

var (
	checkpointCounts = regexp.MustCompile(`^(\d+) completed, (\d+) failed`)
	tokensReceived   = regexp.MustCompile(`Receive update delegation tokens from resource manager`)
	tokensReplaced   = regexp.MustCompile(`am: new delegation tokens obtained`)
	retiredRenewed   = regexp.MustCompile(`am: a replaced delegation token renewed`)
)

func flinkTokensOutliveTheirLifetime(t *testing.T, v flinkVersion, fsys *client.HDFS, submitArgs []string, life time.Duration) {
	base := fmt.Sprintf("/tmp/yarn-am-flink-tokens-%d", time.Now().UnixNano())
	require.NoError(t, fsys.MkdirAll(base, 0o755))
	t.Cleanup(func() { _ = fsys.RemoveAll(base) })
	checkpoints, savepoints := fsys.DefaultFS+base+"/checkpoints", fsys.DefaultFS+base+"/savepoints"

	job := flinkJobOf(t, v, "flink-tokens", 1, 1, []string{"counter"},
		`"execution.checkpointing.interval" = "5s"`+"\n"+
			`"state.storage.fs.memory-threshold" = "0"`+"\n"+
			`"flink.hadoop.ipc.client.connection.maxidletime" = "1000"`)
	// The JobManager hands the AM's tokens on every 5 s or sooner: the AM replaces them at 3/4 of
	// the 60 s lifetime, 15 s before the old ones end.
	addFlinkKeys(t, job, shortTokensRefresh)
	id := e2e.SubmitDetached(t, append([]string{job, "-D", "execution.checkpointing.dir=" + checkpoints}, submitArgs...)...)
	waitFlinkRunning(t, id)
	// The clock starts at the first completed checkpoint: the job is RUNNING before its task is, and
	// Flink fails the triggers until then ("Not all required tasks are currently running"), which
	// are no token's doing. Those failures are the baseline; none may follow.
	counts := func() (completed, failed int, details map[string]string) {
		d, details := flinkDetails(t, id)
		require.False(t, e2e.IsEnded(d.Report.State), "the application ended: %+v\n%s", d.Report, e2e.ContainerLogs(id))
		if m := checkpointCounts.FindStringSubmatch(details["Checkpoints"]); m != nil {
			completed, _ = strconv.Atoi(m[1])
			failed, _ = strconv.Atoi(m[2])
		}
		return completed, failed, details
	}
	var completed, failed, before int
	e2e.WaitFor(t, id, 4*time.Minute, "a first completed checkpoint", func(e2e.StatusDoc) bool {
		completed, before, _ = counts()
		return completed > 0
	})
	start := time.Now()
	runFor := 5 * life
	t.Logf("checkpoint 1 completed (%d triggers failed before the task ran); checkpoints every 5 s for %s (5 x the tokens' maximum lifetime)", before, runFor)
	first := completed
	for time.Since(start) < runFor {
		time.Sleep(10 * time.Second) // a poll of the AM's status, not a stand-in for a signal
		var details map[string]string
		completed, failed, details = counts()
		require.Equal(t, before, failed, "a checkpoint failed %s after the first completed (%d completed); the AM's status: %v\n%s", time.Since(start).Round(time.Second), completed, details, e2e.ContainerLogs(id))
	}
	completed -= first
	// A checkpoint every 5 s; some slack for a slow one under load.
	assert.GreaterOrEqual(t, completed, int(runFor/(10*time.Second)), "checkpoints completed in %s", runFor)
	amLog := amContainerFile(id, "am.stderr")
	replaced := len(tokensReplaced.FindAllString(amLog, -1))
	retired := len(retiredRenewed.FindAllString(amLog, -1))
	received := len(tokensReceived.FindAllString(taskManagerLogs(id), -1))
	t.Logf("%d checkpoints completed, %d failed in %s; the AM replaced its tokens %d times and renewed replaced ones %d times, the TaskManager received tokens %d times", completed, failed-before, runFor, replaced, retired, received)
	assert.GreaterOrEqual(t, replaced, 4, "the AM replaced its tokens past their lifetime, again and again")
	assert.Greater(t, received, replaced, "the TaskManager got the JobManager's tokens after each replacement")
	// The first replacement supersedes submit's tokens, which the RM renews; each later one the AM's
	// own, which it renews until their maximum lifetime for the JVMs that have not read the new ones.
	assert.GreaterOrEqual(t, retired, replaced-1, "the AM renewed the tokens it replaced until their maximum lifetime")
	assert.Contains(t, amContainerFile(id, "am.stdout"), "the JobManager reads the AM's delegation tokens at least every 5s")

	r := e2e.YarnAM(t, 5*time.Minute, "stop", id, "--savepoint", savepoints, "--timeout", "4m")
	require.Equal(t, 0, r.Code, "stop:\n%s\n%s", r, e2e.ContainerLogs(id))
	m := savepointLine.FindStringSubmatch(r.Stdout)
	require.NotNil(t, m, "stop prints the savepoint:\n%s", r)
	assert.Contains(t, r.Stdout, "FINISHED, final status SUCCEEDED")
	_, err := fsys.Stat(path.Join(strings.TrimPrefix(m[1], fsys.DefaultFS), "_metadata"))
	assert.NoError(t, err, "the savepoint's _metadata is on HDFS, written %s after the job's tokens' first end", time.Since(start.Add(life)).Round(time.Second))
}

// taskManagerLogs returns the Flink logs (taskmanager.log and its rolled parts) of the application's
// TaskManager containers.
func taskManagerLogs(id string) string {
	var b strings.Builder
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
		files, _ := filepath.Glob(filepath.Join(d, id, "container_*", "taskmanager.log*"))
		for _, f := range files {
			if strings.Contains(f, "_000001"+string(filepath.Separator)) {
				continue
			}
			data, _ := os.ReadFile(f)
			b.Write(data)
		}
	}
	return b.String()
}

// TestFlinkWithoutAKeytabIsToldWhenItsTokensEnd (docs/flink.md#tokens-past-their-lifetime): a Flink
// job submitted from a ticket cache, without a keytab, has nothing to refresh its tokens. The AM
// says so at its start, well before the first token ends: a warning event with the date, naming
// --principal/--keytab; and the JobManager runs without the token jar. Beside the two tests above.
func TestFlinkWithoutAKeytabIsToldWhenItsTokensEnd(t *testing.T) {
	t.Parallel() // beside TestFlinkHDFSKerberized and TestFlinkTokensOutliveTheirLifetime
	kerberizedFlink(t)
	job := flinkJobOf(t, flink2, "flink-no-keytab", 1, 1, []string{"counter"}, "")
	id := e2e.SubmitDetached(t, job) // the ticket cache kerberizedFlink made
	var told *contract.Event
	e2e.WaitFor(t, id, 3*time.Minute, "the AM's token-deadline event", func(d e2e.StatusDoc) bool {
		r := e2e.YarnAM(t, time.Minute, "status", id, "--json")
		var doc struct {
			AM *contract.Status `json:"am"`
		}
		if r.Code == 0 && json.Unmarshal([]byte(r.Stdout), &doc) == nil && doc.AM != nil {
			for _, e := range doc.AM.Events {
				if e.Type == "token-deadline" {
					told = &e
					return true
				}
			}
		}
		return e2e.IsEnded(d.Report.State)
	})
	require.NotNil(t, told, "no token-deadline event:\n%s", e2e.ContainerLogs(id))
	assert.Equal(t, contract.SeverityWarning, told.Severity)
	assert.Contains(t, told.Message, "pass --principal/--keytab to submit to keep the job alive past it")
	m := regexp.MustCompile(`expires at (\S+) \(max lifetime\)`).FindStringSubmatch(told.Message)
	require.NotNil(t, m, told.Message)
	ends, err := time.Parse(time.RFC3339, m[1])
	require.NoError(t, err)
	assert.True(t, told.Time.Before(ends), "told at %s, before the token ends at %s", told.Time, ends)
	t.Logf("told %s before the first token ends: %s", ends.Sub(told.Time).Round(time.Second), told.Message)

	// Its JobManager's start, whatever comes of the job once its tokens have ended.
	var out string
	e2e.WaitFor(t, id, 3*time.Minute, "the JobManager's JVM started", func(d e2e.StatusDoc) bool {
		out = amContainerFile(id, "am.stdout")
		return strings.Contains(out, "yarn-am flink-jobmanager: JVM memory flags") || e2e.IsEnded(d.Report.State)
	})
	require.Contains(t, out, "yarn-am flink-jobmanager: JVM memory flags", "%s", e2e.ContainerLogs(id))
	assert.NotContains(t, out, "delegation tokens at least every", "no token jar without a keytab")
}
