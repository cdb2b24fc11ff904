package flink

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/internal/rollingfile"
	"github.com/yarn-am/yarn-am/jobfile"
)

func TestParseLogSize(t *testing.T) {
	for in, want := range map[string]int64{
		"64 MiB": 64 << 20, "64MiB": 64 << 20, "64m": 64 << 20, "64 mb": 64 << 20, "64 KiB": 64 << 10,
		"1.5 GiB": 3 << 29, "1 TiB": 1 << 40, " 512k ": 512 << 10,
	} {
		got, err := parseLogSize(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, got, in)
		}
	}
	for in, msg := range map[string]string{
		"64":      "want a number with a unit",
		"64 MB/s": `unit "mb/s"`,
		"63 KiB":  "below the smallest size, 64 KiB",
		"2 TiB":   "above the largest size, 1 TiB",
		"MiB":     "want a number with a unit",
		"1.2.3 m": `"1.2.3" is not a number`,
		"64 PiB":  `unit "pib"`,
	} {
		_, err := parseLogSize(in)
		assert.ErrorContains(t, err, msg, in)
	}
}

// TestFlinkLogRollKeys: the defaults, both keys read, and each bad value refused naming the key, the
// value and what would be valid.
func TestFlinkLogRollKeys(t *testing.T) {
	load := func(t *testing.T, keys string) (*jobfile.Job, error) {
		p := writeJob(t, "[flink]\nhome = \"flink\"\njar = \"job.jar\"\n"+keys)
		fakeFlinkHome(t, filepath.Dir(p))
		return jobfile.LoadJob(p)
	}
	j, err := load(t, "")
	require.NoError(t, err)
	assert.Equal(t, flinkdist.LogRoll{MaxSize: 64 << 20, MaxFiles: 5}, specOf(j).Logs)
	assert.Equal(t, jobfile.LogAggregation{RolledInclude: rolledLogsPattern, Set: true}, j.LogAggregation,
		"a [flink] job's rolled parts are aggregated while it runs")
	p := writeJob(t, "[flink]\nhome = \"flink\"\njar = \"job.jar\"\n[log-aggregation]\nrolled-include = \"\"\nexclude = \"gc\"\n")
	fakeFlinkHome(t, filepath.Dir(p))
	j, err = jobfile.LoadJob(p)
	require.NoError(t, err)
	assert.Equal(t, jobfile.LogAggregation{Exclude: "gc", Set: true}, j.LogAggregation, "rolled-include = \"\" turns the default off")
	j, err = load(t, "log-max-size = \"256 KiB\"\nlog-max-files = 3\n")
	require.NoError(t, err)
	assert.Equal(t, flinkdist.LogRoll{MaxSize: 256 << 10, MaxFiles: 3, Set: true}, specOf(j).Logs)
	for keys, msg := range map[string]string{
		"log-max-size = 1024\n":       `flink.log-max-size = 1024: want a size with a unit, such as "64 MiB" or "512 KiB", not an integer`,
		"log-max-size = \"1 KiB\"\n":  `flink.log-max-size = "1 KiB": below the smallest size, 64 KiB`,
		"log-max-size = \"64 MBs\"\n": `flink.log-max-size = "64 MBs": unit "mbs": want KiB, MiB, GiB or TiB`,
		"log-max-files = 1\n":         "flink.log-max-files = 1: want an integer from 2 to 1000 (the files kept of each log",
		"log-max-files = \"5\"\n":     `flink.log-max-files = "5": want an integer from 2 to 1000, not a string`,
		"log-max-file = 5\n":          `did you mean "flink.log-max-files"`,
	} {
		_, err := load(t, keys)
		assert.ErrorContains(t, err, msg, keys)
	}
}

// TestFlinkLogRollKeysRefuseAHomesOwnLog4j: with a home whose conf/log4j.properties would be used,
// the keys could not apply: check refuses them, naming the file; without the keys the home's file is
// used as before.
func TestFlinkLogRollKeysRefuseAHomesOwnLog4j(t *testing.T) {
	p := writeJob(t, "[flink]\nhome = \"flink\"\njar = \"job.jar\"\nlog-max-files = 3\n")
	dir := filepath.Dir(p)
	fakeFlinkHome(t, dir)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "flink", "conf"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "flink", "conf", "log4j.properties"), []byte("rootLogger.level = INFO\n"), 0o644))
	_, err := jobfile.LoadJob(p)
	require.ErrorContains(t, err, "flink.log-max-size and flink.log-max-files set how yarn-am's log4j configuration rolls, but the Flink home has its own "+filepath.Join(dir, "flink", "conf", "log4j.properties"))
	require.NoError(t, os.WriteFile(p, []byte("[flink]\nhome = \"flink\"\njar = \"job.jar\"\n"), 0o644))
	_, err = jobfile.LoadJob(p)
	require.NoError(t, err)
}

// TestRolledLogsPatternMatchesOnlyRolledParts: the rolled-logs pattern YARN's NodeManager applies to
// a [flink] job's container log files (with Java's find(), which RE2 agrees with for this pattern)
// takes the parts and never a file being written, which the NodeManager would delete once uploaded.
func TestRolledLogsPatternMatchesOnlyRolledParts(t *testing.T) {
	re := regexp.MustCompile(rolledLogsPattern)
	for _, n := range []string{"jobmanager.log.1", "jobmanager.out.12", "jobmanager.err.3", "taskmanager.log.7", "taskmanager.out.100", "taskmanager.err.2"} {
		assert.True(t, re.MatchString(n), n)
	}
	for _, n := range []string{"jobmanager.log", "taskmanager.out", "taskmanager.err", "stdout", "stderr", "am.stdout", "am.stderr", "launch_container.sh",
		"prelaunch.out", "jobmanager.log.1.tmp", "xjobmanager.log.1", "taskmanager.log.", "directory.info"} {
		assert.False(t, re.MatchString(n), n)
	}
}

// fakeJava writes a shell script standing in for the TaskManager's JVM.
func fakeJava(t *testing.T, dir, body string) string {
	t.Helper()
	p := filepath.Join(dir, "java")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/bash\n"+body), 0o755))
	return p
}

// TestSuperviseTaskManagerBoundsItsOutput: the JVM's stdout and stderr land in the rolling
// taskmanager.out and .err (several hundred KiB printed, 64 KiB × 3 kept of each), and a failing JVM
// leaves its exit code and its stderr's last lines on the supervisor's stderr for the launcher.
func TestSuperviseTaskManagerBoundsItsOutput(t *testing.T) {
	dir := t.TempDir()
	java := fakeJava(t, dir, `for i in $(seq 1 3000); do printf 'job print %04d %0100d\n' $i 0; printf 'err line %04d\n' $i >&2; done
echo "Exception in thread main: no slots" >&2
exit 3
`)
	out, errOut, err := openOutputs(dir, "taskmanager", flinkdist.LogRoll{MaxSize: rollingfile.MinSize, MaxFiles: 3})
	require.NoError(t, err)
	var stderr bytes.Buffer
	code := superviseTaskManager(java, &flinkdist.Process{Argv: []string{java}}, out, errOut, &stderr)
	require.NoError(t, out.Close())
	require.NoError(t, errOut.Close())
	assert.Equal(t, 3, code)
	assert.Contains(t, stderr.String(), "yarn-am flink-taskmanager: the TaskManager's JVM exited with code 3; its stderr (taskmanager.err) ends: ")
	assert.Contains(t, stderr.String(), "Exception in thread main: no slots")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var outs, errs int
	for _, e := range entries {
		info, err := e.Info()
		require.NoError(t, err)
		switch {
		case strings.HasPrefix(e.Name(), "taskmanager.out"):
			outs++
			assert.LessOrEqual(t, info.Size(), int64(rollingfile.MinSize), e.Name())
		case strings.HasPrefix(e.Name(), "taskmanager.err"):
			errs++
			assert.LessOrEqual(t, info.Size(), int64(rollingfile.MinSize), e.Name())
		}
	}
	assert.Equal(t, 3, outs, "taskmanager.out and two parts")
	assert.LessOrEqual(t, errs, 3)
	last, err := os.ReadFile(filepath.Join(dir, "taskmanager.out"))
	require.NoError(t, err)
	assert.Contains(t, string(last), "job print 3000 ")
}

// TestSuperviseTaskManagerPassesSignalsOn: a SIGTERM to the supervisor reaches the JVM, whose exit
// code (its own after the signal, or 128+15) is the supervisor's.
func TestSuperviseTaskManagerPassesSignalsOn(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	java := fakeJava(t, dir, `trap 'echo got TERM; exit 42' TERM
touch `+ready+`
while true; do sleep 0.05; done
`)
	out, errOut, err := openOutputs(dir, "taskmanager", flinkdist.LogRoll{})
	require.NoError(t, err)
	defer out.Close()
	defer errOut.Close()
	got := make(chan int, 1)
	go func() {
		var stderr bytes.Buffer
		got <- superviseTaskManager(java, &flinkdist.Process{Argv: []string{java}}, out, errOut, &stderr)
	}()
	require.Eventually(t, func() bool { _, err := os.Stat(ready); return err == nil }, 20*time.Second, 20*time.Millisecond, "the JVM started")
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGTERM))
	select {
	case code := <-got:
		assert.Equal(t, 42, code)
	case <-time.After(20 * time.Second):
		t.Fatal("the supervisor did not end after SIGTERM")
	}
	b, err := os.ReadFile(filepath.Join(dir, "taskmanager.out"))
	require.NoError(t, err)
	assert.Equal(t, "got TERM\n", string(b))
}
