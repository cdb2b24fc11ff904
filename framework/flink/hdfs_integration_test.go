//go:build integration

package flink_test

import (
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/testkit/e2e"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// TestFlinkHDFSCheckpointsAndSavepoint: a [flink] job's JobManager and TaskManager reach HDFS
// through the cluster's Hadoop classpath (yarn.application.classpath, which the mini cluster sets
// to its own Hadoop jars): the counter job checkpoints every second into the -D
// execution.checkpointing.dir on HDFS, with its TaskManager writing the state files itself, and yarn-am
// stop --savepoint hdfs://... lands a savepoint there (docs/flink.md#hdfs-checkpoints-and-savepoints).
// Then the test job's fs mode writes and reads HDFS from user code: the program's main in the
// JobManager and an operator in a TaskManager, through Flink's FileSystem. TestFlinkHDFSKerberized
// runs the first part on the Kerberized cluster (make test-secure-flink). Both on each tested Flink
// line.
func TestFlinkHDFSCheckpointsAndSavepoint(t *testing.T) {
	e2e.Env(t)
	fsys := testUserHDFS(t)
	eachFlinkAtOnce(t, func(t *testing.T, v flinkVersion) { testFlinkHDFSCheckpointsAndSavepoint(t, v, fsys) })
}

func testFlinkHDFSCheckpointsAndSavepoint(t *testing.T, v flinkVersion, fsys *client.HDFS) {
	flinkHDFSCheckpointsAndSavepoint(t, v, fsys, nil, "")

	dir := fmt.Sprintf("/tmp/yarn-am-flink-fs-%d", time.Now().UnixNano())
	require.NoError(t, fsys.MkdirAll(dir, 0o755))
	t.Cleanup(func() { _ = fsys.RemoveAll(dir) })
	start := time.Now()
	id := e2e.SubmitDetached(t, flinkJobOf(t, v, "flink-fs", 1, 1, []string{"fs", fsys.DefaultFS + dir}, ""))
	d := e2e.WaitFor(t, id, 4*time.Minute, "the end", func(d e2e.StatusDoc) bool { return e2e.IsEnded(d.Report.State) })
	require.Equal(t, "SUCCEEDED", d.Report.FinalStatus, "%s\n%s", d.Report.Diagnostics, e2e.ContainerLogs(id))
	t.Logf("fs job: submit to SUCCEEDED in %s", time.Since(start).Round(100*time.Millisecond))
	containers := map[string]string{}
	for _, name := range []string{"main", "operator"} {
		f, err := fsys.Open(path.Join(dir, name))
		require.NoError(t, err, "%s/%s on HDFS", dir, name)
		b := make([]byte, 4096)
		n, _ := io.ReadFull(f, b)
		f.Close()
		m := regexp.MustCompile(`^YARN_AM_FLINK_FS wrote=(\S+) container=(container_\S+)$`).FindStringSubmatch(string(b[:n]))
		require.NotNil(t, m, "%s holds %q", name, b[:n])
		assert.Equal(t, fsys.DefaultFS+dir+"/"+name, m[1])
		containers[name] = m[2]
	}
	assert.True(t, strings.HasSuffix(containers["main"], "_000001"), "main ran in the AM's container: %v", containers)
	assert.NotEqual(t, containers["main"], containers["operator"], "the operator ran in a TaskManager's container")
}

// flinkHDFSCheckpointsAndSavepoint is the test of both clusters on Flink line v; fsys lists HDFS as
// the submitting user, submitArgs are added to the submit (a keytab on the Kerberized cluster).
func flinkHDFSCheckpointsAndSavepoint(t *testing.T, v flinkVersion, fsys *client.HDFS, submitArgs []string, flinkKeys string) {
	base := fmt.Sprintf("/tmp/yarn-am-flink-hdfs-%d", time.Now().UnixNano())
	require.NoError(t, fsys.MkdirAll(base, 0o755))
	t.Cleanup(func() { _ = fsys.RemoveAll(base) })
	checkpoints, savepoints := fsys.DefaultFS+base+"/checkpoints", fsys.DefaultFS+base+"/savepoints"

	// Threshold 0: the TaskManager writes its state to a file of its own instead of sending it to the
	// JobManager inline, so both processes must reach HDFS.
	job := flinkJobOf(t, v, "flink-hdfs", 1, 1, []string{"counter"},
		`"execution.checkpointing.interval" = "1s"`+"\n"+`"state.storage.fs.memory-threshold" = "0"`)
	addFlinkKeys(t, job, flinkKeys)
	start := time.Now()
	id := e2e.SubmitDetached(t, append([]string{job, "-D", "execution.checkpointing.dir=" + checkpoints}, submitArgs...)...)

	// Checkpoints on HDFS: <dir>/<job id>/chk-N with the JobManager's _metadata and a TaskManager's
	// state file (a subsumed one is deleted as the next completes: look until one is seen whole).
	var seen string
	e2e.WaitFor(t, id, 4*time.Minute, "a completed checkpoint on HDFS", func(d e2e.StatusDoc) bool {
		if e2e.IsEnded(d.Report.State) {
			return true
		}
		seen = completedCheckpoint(fsys, base+"/checkpoints")
		return seen != ""
	})
	require.NotEmpty(t, seen, "no checkpoint on HDFS; the application: %+v\n%s", e2e.Status(t, id).Report, e2e.ContainerLogs(id))
	t.Logf("submit to a checkpoint on HDFS (%s) in %s", seen, time.Since(start).Round(100*time.Millisecond))

	r := e2e.YarnAM(t, 5*time.Minute, "stop", id, "--savepoint", savepoints, "--timeout", "4m")
	require.Equal(t, 0, r.Code, "stop:\n%s\n%s", r, e2e.ContainerLogs(id))
	m := savepointLine.FindStringSubmatch(r.Stdout)
	require.NotNil(t, m, "stop prints the savepoint:\n%s", r)
	assert.Contains(t, m[1], base+"/savepoints/savepoint-")
	assert.Contains(t, r.Stdout, "FINISHED, final status SUCCEEDED")
	sp := strings.TrimPrefix(m[1], fsys.DefaultFS)
	_, err := fsys.Stat(path.Join(sp, "_metadata"))
	assert.NoError(t, err, "the savepoint's _metadata is on HDFS")

	// Each process says where its Hadoop classpath came from, in its container's stdout.
	var lines []string
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
		files, _ := filepath.Glob(filepath.Join(d, id, "*", "*stdout*"))
		for _, f := range files {
			data, _ := os.ReadFile(f)
			lines = append(lines, hadoopCPLine.FindAllString(string(data), -1)...)
		}
	}
	t.Logf("%s", strings.Join(lines, "\n"))
	assert.Len(t, lines, 2, "one line from the JobManager, one from the TaskManager")
	for _, l := range lines {
		assert.Contains(t, l, "from yarn.application.classpath:")
	}
}

var hadoopCPLine = regexp.MustCompile(`yarn-am flink-(job|task)manager: Hadoop classpath from .*`)

// completedCheckpoint returns a chk-N directory under dir that holds _metadata and at least one
// state file, or "".
func completedCheckpoint(fsys *client.HDFS, dir string) string {
	jobs, err := fsys.Client.ReadDir(dir)
	if err != nil {
		return ""
	}
	for _, j := range jobs {
		chks, err := fsys.Client.ReadDir(path.Join(dir, j.Name()))
		if err != nil {
			continue
		}
		for _, c := range chks {
			if !strings.HasPrefix(c.Name(), "chk-") {
				continue
			}
			p := path.Join(dir, j.Name(), c.Name())
			files, err := fsys.Client.ReadDir(p)
			if err != nil {
				continue
			}
			meta := false
			for _, f := range files {
				meta = meta || f.Name() == "_metadata"
			}
			if meta && len(files) >= 2 {
				return p
			}
		}
	}
	return ""
}

// testUserHDFS dials the mini cluster's HDFS as the user the tests submit as (HADOOP_USER_NAME, else
// USER); the client is closed when the test ends.
func testUserHDFS(t *testing.T) *client.HDFS {
	t.Helper()
	conf, err := yarnrpc.LoadConfigFromEnv()
	require.NoError(t, err)
	user := os.Getenv("HADOOP_USER_NAME")
	if user == "" {
		user = os.Getenv("USER")
	}
	fsys, err := client.DialHDFS(conf, user)
	require.NoError(t, err)
	t.Cleanup(func() { _ = fsys.Close() })
	return fsys
}

// addFlinkKeys adds lines (yarn-am's own keys, e.g. token-refresh) to the [flink] table of the job
// file at job; none leaves it as it is.
func addFlinkKeys(t *testing.T, job, lines string) {
	t.Helper()
	if lines == "" {
		return
	}
	body, err := os.ReadFile(job)
	require.NoError(t, err)
	require.Contains(t, string(body), "[flink]\n")
	require.NoError(t, os.WriteFile(job, []byte(strings.Replace(string(body), "[flink]\n", "[flink]\n"+lines+"\n", 1)), 0o644))
}
