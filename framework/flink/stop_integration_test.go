//go:build integration

package flink_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/testkit/e2e"
)

// flinkDetails is the AM's framework section of `yarn-am status --json` (nil before the first read).
func flinkDetails(t *testing.T, id string) (report e2e.StatusDoc, details map[string]string) {
	t.Helper()
	r := e2e.YarnAM(t, time.Minute, "status", id, "--json")
	require.Equal(t, 0, r.Code, "status:\n%s", r)
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &report))
	var d struct {
		AM *contract.Status `json:"am"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &d))
	if d.AM == nil || d.AM.Framework == nil {
		return report, nil
	}
	details = map[string]string{"title": d.AM.Framework.Title}
	for _, x := range d.AM.Framework.Details {
		details[x.Name] = x.Value
	}
	return report, details
}

// waitFlinkRunning waits until the AM's status shows the Flink job RUNNING and returns its details.
func waitFlinkRunning(t *testing.T, id string) map[string]string {
	t.Helper()
	var details map[string]string
	e2e.WaitFor(t, id, 4*time.Minute, "the Flink job RUNNING in the AM's status", func(e2e.StatusDoc) bool {
		var d e2e.StatusDoc
		d, details = flinkDetails(t, id)
		// A completed checkpoint: every task runs (before, Flink refuses a savepoint for a moment).
		return e2e.IsEnded(d.Report.State) || details["State"] == "RUNNING" && details["Parallelism"] != "" && details["Last checkpoint"] != ""
	})
	require.Equal(t, "RUNNING", details["State"], "%v\n%s", details, e2e.ContainerLogs(id))
	return details
}

var savepointLine = regexp.MustCompile(`(?m)^Savepoint: (\S+)$`)

// The events of the savepoint schedule (framework/flink/savepoints.go).
var (
	scheduledRe = regexp.MustCompile(`scheduled savepoint written to (\S+) in `)
	deletedRe   = regexp.MustCompile(`scheduled savepoint (\S+) deleted `)
)

// savepointsIn are the names of the savepoint directories in dir (none when it does not exist yet).
func savepointsIn(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "savepoint-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestFlinkStatusStopAndRestore: a stream job's id, state and parallelism are in yarn-am status (the
// "Flink job" block) and the flink-job events; its savepoints on a schedule (every 3 s, 2 kept) are
// events, and once 3 were taken exactly 2 are left in the directory; yarn-am savepoint --dir takes
// one without stopping the job and prints its path; yarn-am stop --savepoint stops it with a
// savepoint whose path it prints, the application SUCCEEDS with the savepoint in its diagnostics and
// the directory exists; a second submit with [flink] restore of that path starts from it, as the
// AM's status shows from the JobManager's checkpoint statistics (issue 35 §5, §6; issue 45 §3). On
// each tested Flink line.
func TestFlinkStatusStopAndRestore(t *testing.T) {
	e2e.Env(t)
	eachFlinkAtOnce(t, testFlinkStatusStopAndRestore)
}

func testFlinkStatusStopAndRestore(t *testing.T, v flinkVersion) {
	spDir := filepath.Join(os.TempDir(), fmt.Sprintf("yarn-am-savepoints-%d", time.Now().UnixNano()))
	t.Cleanup(func() { os.RemoveAll(spDir) })
	scheduled := filepath.Join(spDir, "scheduled")
	job := flinkJobOf(t, v, "flink-stop", 2, 1, []string{"stream"}, fmt.Sprintf("\"execution.checkpointing.interval\" = \"2s\"\n\"state.savepoints.dir\" = %q", "file://"+scheduled))
	body, err := os.ReadFile(job)
	require.NoError(t, err)
	// Savepoints on a schedule (docs/flink.md#savepoints-on-a-schedule); the restored job below has none.
	withSchedule := strings.Replace(string(body), "[flink.config]", "savepoint-interval = \"3s\"\nsavepoints-kept = 2\n\n[flink.config]", 1)
	require.NoError(t, os.WriteFile(job, []byte(withSchedule), 0o644))
	id := e2e.SubmitDetached(t, job)

	details := waitFlinkRunning(t, id)
	assert.Equal(t, "Flink job", details["title"])
	assert.Regexp(t, `\([0-9a-f]{32}\)$`, details["Job"])
	assert.NotEmpty(t, details["Parallelism"])
	r := e2e.YarnAM(t, time.Minute, "status", id)
	require.Equal(t, 0, r.Code, "status:\n%s", r)
	assert.Contains(t, r.Stdout, "Flink job:")
	assert.Regexp(t, `(?m)^  State: +RUNNING$`, r.Stdout)
	assert.Regexp(t, `(?m)^  Parallelism: +\d+$`, r.Stdout)
	// A slower JobManager (Flink 2.3 here) is first seen INITIALIZING, then an event tells its RUNNING.
	assert.Regexp(t, `flink-job: Flink job .* is (INITIALIZING|CREATED|RUNNING)`, r.Stdout, "the first sight of the job is an event")

	// At least 3 scheduled savepoints, each an event, and then exactly the newest 2 in the directory.
	start := time.Now()
	written, deleted := map[string]bool{}, map[string]bool{}
	var left []string
	e2e.WaitFor(t, id, 3*time.Minute, "3 scheduled savepoints taken and 2 left", func(d e2e.StatusDoc) bool {
		for _, e := range statusEvents(t, id) {
			if m := scheduledRe.FindStringSubmatch(e.Message); m != nil {
				written[m[1]] = true
			}
			if m := deletedRe.FindStringSubmatch(e.Message); m != nil {
				deleted[m[1]] = true
			}
			assert.NotContains(t, e.Message, "could not be deleted")
		}
		left = savepointsIn(t, scheduled)
		return e2e.IsEnded(d.Report.State) || len(written) >= 3 && len(deleted) >= 1 && len(left) == 2
	})
	t.Logf("3 scheduled savepoints and a deletion took %s: written %d, deleted %d, left %v", time.Since(start).Round(100*time.Millisecond), len(written), len(deleted), left)
	require.GreaterOrEqual(t, len(written), 3, "%s", e2e.ContainerLogs(id))
	require.Len(t, left, 2)
	for _, name := range left {
		assert.False(t, deleted["file:"+filepath.Join(scheduled, name)], "%s was told deleted", name)
	}

	// One on demand: the job runs on.
	demandDir := filepath.Join(spDir, "demand")
	start = time.Now()
	r = e2e.YarnAM(t, 3*time.Minute, "savepoint", id, "--dir", "file://"+demandDir, "--timeout", "2m")
	require.Equal(t, 0, r.Code, "savepoint:\n%s\n%s", r, e2e.ContainerLogs(id))
	m := savepointLine.FindStringSubmatch(r.Stdout)
	require.NotNil(t, m, "savepoint prints the savepoint:\n%s", r)
	t.Logf("yarn-am savepoint took %s: %s", time.Since(start).Round(100*time.Millisecond), m[1])
	demand := strings.TrimPrefix(strings.TrimPrefix(m[1], "file://"), "file:")
	assert.True(t, strings.HasPrefix(demand, demandDir+"/savepoint-"), demand)
	assert.FileExists(t, filepath.Join(demand, "_metadata"))
	_, details = flinkDetails(t, id)
	assert.Equal(t, "RUNNING", details["State"], "the job runs on after its savepoint")

	start = time.Now()
	r = e2e.YarnAM(t, 5*time.Minute, "stop", id, "--savepoint", "file://"+spDir, "--timeout", "4m")
	took := time.Since(start)
	require.Equal(t, 0, r.Code, "stop:\n%s\n%s", r, e2e.ContainerLogs(id))
	m = savepointLine.FindStringSubmatch(r.Stdout)
	require.NotNil(t, m, "stop prints the savepoint:\n%s", r)
	path := m[1]
	t.Logf("stop took %s; savepoint %s", took.Round(100*time.Millisecond), path)
	assert.Contains(t, path, spDir)
	assert.Contains(t, r.Stdout, "FINISHED, final status SUCCEEDED")
	local := strings.TrimPrefix(strings.TrimPrefix(path, "file://"), "file:")
	st, err := os.Stat(local)
	require.NoError(t, err, "the savepoint directory exists")
	assert.True(t, st.IsDir())
	_, err = os.Stat(filepath.Join(local, "_metadata"))
	assert.NoError(t, err, "the savepoint has its metadata")
	d := e2e.Status(t, id)
	assert.Equal(t, "SUCCEEDED", d.Report.FinalStatus)
	assert.Contains(t, d.Report.Diagnostics, "stopped with a savepoint at")

	// The next submit starts from it.
	again := strings.Replace(string(body), "[flink.config]", fmt.Sprintf("restore = %q\n\n[flink.config]", path), 1)
	job2 := filepath.Join(t.TempDir(), "flink-restore.toml")
	require.NoError(t, os.WriteFile(job2, []byte(again), 0o644))
	id2 := e2e.SubmitDetached(t, job2)
	var restored map[string]string
	e2e.WaitFor(t, id2, 4*time.Minute, "the restored job RUNNING with its restore in the status", func(e2e.StatusDoc) bool {
		var d e2e.StatusDoc
		d, restored = flinkDetails(t, id2)
		return e2e.IsEnded(d.Report.State) || restored["State"] == "RUNNING" && restored["Restored from"] != ""
	})
	require.Equal(t, "RUNNING", restored["State"], "%v\n%s", restored, e2e.ContainerLogs(id2))
	assert.Contains(t, restored["Restored from"], "savepoint")
	assert.Contains(t, restored["Restored from"], filepath.Base(local))
	r = e2e.YarnAM(t, time.Minute, "status", id2)
	assert.Regexp(t, `flink-job: Flink job .* restored from savepoint`, r.Stdout)
}
