//go:build integration

package flink_test

import (
	"io"
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

	"github.com/yarn-am/yarn-am/internal/hdfsfile"
	"github.com/yarn-am/yarn-am/testkit/e2e"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// amContainerFile returns the content of a file in the log directory of the application's AM
// container (am.stdout: the driver's stdout; jobmanager.log, jobmanager.err).
func amContainerFile(id, name string) string {
	var b strings.Builder
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
		files, _ := filepath.Glob(filepath.Join(d, id, "container_*_000001", name))
		for _, f := range files {
			data, _ := os.ReadFile(f)
			b.Write(data)
		}
	}
	return b.String()
}

var (
	cdsMade = regexp.MustCompile(`class-data sharing: archive (flink-\S+\.jsa) \(([0-9.]+) MiB\) made in ([0-9.]+) s from the (\d+) classes the JobManager loaded \(and (\d+) of Flink's RPC jar\), put into the cache in ([0-9.]+) s`)
	cdsUsed = regexp.MustCompile(`yarn-am flink-(jobmanager|taskmanager): class-data sharing: using the archive yarn-am-cds-(\S+\.jsa) \(SHA-256 verified in ([0-9.]+) s\)`)
	// The JVM options Flink's EnvironmentInformation logs at the start.
	cdsFlag = regexp.MustCompile(`-XX:SharedArchiveFile=\S*yarn-am-cds-\S+\.jsa`)
)

// TestFlinkClassDataSharing (docs/flink.md#class-data-sharing): the first run of a Flink home has no
// archive, and its driver makes one after the job and puts it into the user's cache; the second run's
// JobManager and TaskManager map it (the JVM options in jobmanager.log name it, the JVM did not refuse
// it) after checking its SHA-256, and not two archives planted beside it with consistent names and
// newer times, which submit refuses for want of a record the user's key made, and the AM's event
// says so in status (runWithPlantedArchives); an archive rewritten on HDFS is refused, said so, and
// the job still SUCCEEDS without it, after which a good archive replaces it. On each tested Flink line
// (an archive is of one home: its identity begins with flink-<version>).
func TestFlinkClassDataSharing(t *testing.T) {
	e2e.Env(t)
	c := e2e.MiniCluster(t)
	eachFlinkAtOnce(t, func(t *testing.T, v flinkVersion) { testFlinkClassDataSharing(t, v, c) })
}

func testFlinkClassDataSharing(t *testing.T, v flinkVersion, c *e2e.Cluster) {
	root := path.Join("/user", yarnrpc.CurrentUser(), ".yarn-am", "cache", "cds")
	// Start without archives of this version's home; the other version's stay for its tests.
	ours := "flink-" + flinkHomeVersion(t, v) + "-"
	homes, err := c.FS.ReadDir(root)
	if err == nil {
		for _, h := range homes {
			files, err := c.FS.ReadDir(path.Join(root, h.Name()))
			if err != nil {
				continue // the other line's subtest, running beside this one, removed its own
			}
			for _, f := range files {
				if strings.HasPrefix(f.Name(), ours) {
					require.NoError(t, c.FS.RemoveAll(path.Join(root, h.Name())), "start without archives of this home")
					break
				}
			}
		}
	}
	job := flinkJobOf(t, v, "flink-cds", 1, 1, []string{"gpu", "1"}, "")

	run := func(what string) (string, string) {
		t.Helper()
		start := time.Now()
		r := e2e.YarnAM(t, 6*time.Minute, "submit", job)
		id := e2e.SubmittedID(r.Stdout)
		require.Equal(t, 0, r.Code, "%s:\n%s\n%s", what, r, e2e.ContainerLogs(id))
		require.Len(t, tmLines(id, flinkGPULine), 1, "the job ran:\n%s", e2e.ContainerLogs(id))
		t.Logf("measured: %s: submit -> end %s (load %s)", what, time.Since(start).Round(time.Second), loadAvgE2E())
		return id, r.Stdout
	}

	// 1: no archive yet; the driver makes one after the job.
	id, out := run("first run")
	assert.Contains(t, out, "class-data sharing: no archive of this Flink home yet")
	driver := amContainerFile(id, "am.stdout")
	made := cdsMade.FindStringSubmatch(driver)
	require.NotNil(t, made, "the driver made an archive:\n%s", driver)
	t.Logf("measured: archive %s of %s MiB made in %s s after the job from %s classes and %s of Flink's RPC jar, put into the cache in %s s", made[1], made[2], made[3], made[4], made[5], made[6])
	rpc, _ := strconv.Atoi(made[5])
	assert.Greater(t, rpc, 1000, "the classes of Flink's RPC system (Pekko, Scala) that the JobManager loaded with its own class loader")
	assert.NotRegexp(t, cdsFlag, amContainerFile(id, "jobmanager.log"), "the first JobManager had no archive")
	assert.Contains(t, amContainerFile(id, "jobmanager.log"), "-XX:DumpLoadedClassList=", "the first JobManager listed the classes it loaded")
	require.True(t, strings.HasPrefix(made[1], ours), "the archive %s is of Flink %s's home", made[1], flinkHomeVersion(t, v))
	var archive string
	var fi os.FileInfo
	homes, err = c.FS.ReadDir(root)
	require.NoError(t, err)
	for _, h := range homes {
		if st, err := c.FS.Stat(path.Join(root, h.Name(), made[1])); err == nil {
			require.Empty(t, archive, "one home directory holds the archive")
			archive, fi = path.Join(root, h.Name(), made[1]), st
		}
	}
	require.NotEmpty(t, archive, "the archive is in the cache")
	// The archive holds what the whole JobManager's life loaded: its job's execution graph, which a
	// JobManager stopped once its REST endpoint listened never loads.
	content := string(readHDFS(t, c, archive))
	assert.Contains(t, content, "org/apache/flink/runtime/executiongraph/DefaultExecutionGraph", "the archive holds the classes of the job's scheduling")
	assert.Contains(t, content, "org/apache/pekko/actor/ActorSystem", "the archive holds the classes of Flink's RPC system")

	// 2: submit finds it, and not the two archives planted beside it with consistent names and newer
	// times; the JobManager and the TaskManager verify and map it.
	id, out = runWithPlantedArchives(t, c, job, archive)
	assert.Contains(t, out, "class-data sharing: archive "+made[1])
	var roles []string
	for _, m := range append(cdsUsed.FindAllStringSubmatch(amContainerFile(id, "am.stdout"), -1), tmLines(id, cdsUsed)...) {
		assert.Equal(t, made[1], m[2])
		roles = append(roles, m[1]+" verified in "+m[3]+" s")
	}
	assert.ElementsMatch(t, []string{"jobmanager", "taskmanager"}, rolesOf(roles), "both verified the archive: %v\n%s", roles, e2e.ContainerLogs(id))
	t.Logf("measured: %s", strings.Join(roles, ", "))
	jmLog := amContainerFile(id, "jobmanager.log")
	assert.Regexp(t, cdsFlag, jmLog, "the JobManager's JVM options name the archive")
	assert.NotContains(t, amContainerFile(id, "jobmanager.err"), "Unable to use shared archive", "the JVM mapped it")
	assert.NotRegexp(t, cdsMade, amContainerFile(id, "am.stdout"), "no second archive")

	// 3: the archive rewritten on HDFS (same name and size, one byte changed): refused, the job runs
	// without it, and the driver makes a good one.
	data := readHDFS(t, c, archive)
	data[len(data)/2] ^= 0xff
	require.NoError(t, c.FS.Remove(archive))
	w, err := c.FS.Create(archive)
	require.NoError(t, err)
	_, err = w.Write(data)
	require.NoError(t, err)
	require.NoError(t, hdfsfile.Close(w))
	require.Equal(t, fi.Size(), int64(len(data)))
	id, _ = run("tampered archive")
	driver = amContainerFile(id, "am.stdout")
	assert.Contains(t, driver, "is not the one recorded when it was made", "the JobManager refused it:\n%s", driver)
	assert.NotRegexp(t, cdsFlag, amContainerFile(id, "jobmanager.log"), "the JobManager started without it")
	assert.NotRegexp(t, cdsUsed, driver+strings.Join(flatten(tmLines(id, cdsUsed)), ""), "nobody used it")
	assert.Regexp(t, cdsMade, driver, "a good archive replaces it")
}

func rolesOf(lines []string) []string {
	var out []string
	for _, l := range lines {
		out = append(out, strings.Fields(l)[0])
	}
	return out
}

func flatten(m [][]string) []string {
	var out []string
	for _, x := range m {
		out = append(out, x...)
	}
	return out
}

func readHDFS(t *testing.T, c *e2e.Cluster, p string) []byte {
	t.Helper()
	r, err := c.FS.Open(p)
	require.NoError(t, err)
	defer r.Close()
	fi, err := c.FS.Stat(p)
	require.NoError(t, err)
	data := make([]byte, fi.Size())
	_, err = io.ReadFull(r, data)
	require.NoError(t, err)
	return data
}
