//go:build integration

package am_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/contract"
)

// startsFromNewer is attempt 2's event when the checkpoint the AM kept is gone and it starts from
// the newest one left.
var startsFromNewer = regexp.MustCompile(`^AM attempt 2: the Flink job starts from checkpoint (\d+) at (\S+), the newest completed one in "([^"]+)" \(attempt 1 last saw checkpoint (\d+);`)

// TestFlinkRestoreOutlivesASubsumedCheckpoint: the counter job's own keys retain its checkpoints on
// cancellation and keep one of them (num-retained = 1, as a job that sets its own retention often
// does); yarn-am raises num-retained to what its reads need, and the JobManager's line says so. The AM
// is stopped (SIGSTOP), so it records nothing more, while its JobManager goes on checkpointing until
// Flink has deleted the checkpoint the AM kept (read from the staging directory's record); then the
// AM is SIGKILLed. Attempt 2 starts from the newest completed checkpoint left, newer than the kept
// one (its event says which and why), where it would have failed on a path that is gone; its
// TaskManager restores a count and counts on; the application stays on attempt 2, RUNNING
// (docs/flink.md#when-the-applicationmaster-is-lost). On each tested Flink line.
func TestFlinkRestoreOutlivesASubsumedCheckpoint(t *testing.T) {
	e2eEnv(t)
	fsys := testUserHDFS(t)
	eachFlinkAtOnce(t, func(t *testing.T, v flinkVersion) { testFlinkRestoreOutlivesASubsumedCheckpoint(t, v, fsys) })
}

func testFlinkRestoreOutlivesASubsumedCheckpoint(t *testing.T, v flinkVersion, fsys *client.HDFS) {
	base := fmt.Sprintf("/tmp/yarn-am-flink-subsumed-%d", time.Now().UnixNano())
	require.NoError(t, fsys.MkdirAll(base, 0o755))
	t.Cleanup(func() { _ = fsys.RemoveAll(base) })
	job := flinkJobOf(t, v, "flink-subsumed", 1, 1, []string{"counter"}, fmt.Sprintf(
		"\"execution.checkpointing.interval\" = \"1s\"\n\"execution.checkpointing.dir\" = %q\n"+
			"\"execution.checkpointing.externalized-checkpoint-retention\" = \"RETAIN_ON_CANCELLATION\"\n"+
			"\"execution.checkpointing.num-retained\" = \"1\"", fsys.DefaultFS+base))
	body, err := os.ReadFile(job)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(job, []byte(strings.Replace(string(body), "max-attempts = 1", "max-attempts = 2", 1)), 0o644))
	id := submitDetached(t, job)

	var seen int
	waitFor(t, id, 4*time.Minute, "completed checkpoints kept for a later attempt", func(statusDoc) bool {
		d, details := flinkDetails(t, id)
		if isEnded(d.Report.State) {
			return true
		}
		m := checkpointID.FindStringSubmatch(details["Last checkpoint"])
		if m == nil {
			return false
		}
		seen, _ = strconv.Atoi(m[1])
		return seen >= 3 && strings.Contains(yarnAM(t, time.Minute, "status", id).stdout, "is kept in the staging directory for a later AM attempt")
	})
	require.GreaterOrEqual(t, seen, 3, "%s", containerLogs(id))
	assert.Contains(t, amContainerFile(id, "am.stdout"), "yarn-am flink-jobmanager: execution.checkpointing.num-retained: 1 raised to 7 (for a checkpoint every 1s",
		"the job's own num-retained is raised")

	// The AM stops recording; its JobManager checkpoints on.
	amCID := strings.Replace(id, "application_", "container_", 1) + "_01_000001"
	pids := procsOfContainer(amCID, "yarn-am", "am")
	require.Len(t, pids, 1, "the AM process of %s", amCID)
	require.NoError(t, syscall.Kill(pids[0], syscall.SIGSTOP))
	t.Cleanup(func() { _ = syscall.Kill(pids[0], syscall.SIGCONT) })

	// The checkpoint the AM kept, from its record in the staging directory.
	d, _ := flinkDetails(t, id)
	attrs, err := fsys.Client.GetXAttrs(client.StagingDir(d.Report.User, id), "user.yarn-am.framework-state")
	require.NoError(t, err)
	var kept struct {
		Checkpoint int64  `json:"checkpoint"`
		Path       string `json:"path"`
	}
	require.NoError(t, json.Unmarshal([]byte(attrs["user.yarn-am.framework-state"]), &kept), "%q", attrs)
	require.Contains(t, kept.Path, base, "the kept checkpoint %+v", kept)
	keptMeta := path.Join(strings.TrimPrefix(kept.Path, fsys.DefaultFS), "_metadata")

	// Flink deletes it once num-retained newer ones completed.
	stopped := time.Now()
	require.Eventually(t, func() bool {
		_, err := fsys.Stat(keptMeta)
		return errors.Is(err, os.ErrNotExist)
	}, 3*time.Minute, 500*time.Millisecond, "Flink deletes the kept checkpoint %s (subsumed) while the AM is stopped", kept.Path)
	subsumed := time.Since(stopped)
	before, oldTM := lastCount(id)
	require.Greater(t, before, 0, "the counter printed before the kill")
	require.NoError(t, syscall.Kill(pids[0], syscall.SIGKILL))

	// Attempt 2 runs the job again, from a checkpoint newer than the kept one.
	var details map[string]string
	deadline := time.Now().Add(4 * time.Minute)
	for {
		var d statusDoc
		d, details = flinkDetails(t, id)
		if isEnded(d.Report.State) || details["AM attempt 2"] != "" && details["State"] == "RUNNING" && details["Restored from"] != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("attempt 2 RUNNING the restored job not reached within 4m: %v\n%s", details, yarnAM(t, time.Minute, "status", id))
		}
		time.Sleep(time.Second)
	}
	require.Contains(t, details["AM attempt 2"], "restored checkpoint", "%v\n%s\n%s", details, yarnAM(t, time.Minute, "status", id), containerLogs(id))
	j := yarnAM(t, time.Minute, "status", id, "--json")
	require.Equal(t, 0, j.code, "status:\n%s", j)
	var doc struct {
		AM *contract.Status `json:"am"`
	}
	require.NoError(t, json.Unmarshal([]byte(j.stdout), &doc))
	require.NotNil(t, doc.AM)
	var m []string
	for _, e := range doc.AM.Events {
		if e.Type == "flink-job" && strings.HasPrefix(e.Message, "AM attempt 2: ") {
			m = startsFromNewer.FindStringSubmatch(e.Message)
		}
	}
	require.NotNil(t, m, "attempt 2 says it starts from a newer checkpoint: %+v", doc.AM.Events)
	from, _ := strconv.ParseInt(m[1], 10, 64)
	assert.Greater(t, from, kept.Checkpoint, "a checkpoint newer than the kept one")
	assert.Equal(t, strconv.FormatInt(kept.Checkpoint, 10), m[4])
	assert.Equal(t, fmt.Sprintf("%s/chk-%d", m[3], from), m[2])
	assert.Contains(t, details["AM attempt 2"], fmt.Sprintf("restored checkpoint %d, %s", from, m[2]))

	var restored int
	var newTM string
	require.Eventually(t, func() bool {
		for _, m := range tmLines(id, restoredLine) {
			if m[2] != oldTM && m[1] != "none" {
				restored, _ = strconv.Atoi(m[1])
				newTM = m[2]
				return true
			}
		}
		return false
	}, 2*time.Minute, time.Second, "a TaskManager of attempt 2 prints what it restored\n%s", containerLogs(id))
	assert.Contains(t, newTM, "_02_", "the TaskManager is attempt 2's")
	assert.Greater(t, restored, 0, "the state was restored")
	require.Eventually(t, func() bool {
		for _, m := range tmLines(id, counterLine) {
			if n, _ := strconv.Atoi(m[1]); m[2] == newTM && n > restored {
				return true
			}
		}
		return false
	}, 2*time.Minute, time.Second, "attempt 2's TaskManager counts on from %d", restored)

	rep := rmReport(t, id, 10*time.Second)
	assert.EqualValues(t, 2, rep.GetCurrentApplicationAttemptId().GetAttemptId(), "still attempt 2: its restore did not fail it")
	t.Logf("kept checkpoint %d deleted by Flink %s after the AM stopped; attempt 2 started from checkpoint %d and restored %d (%d counted before the kill)",
		kept.Checkpoint, subsumed.Round(100*time.Millisecond), from, restored, before)
}
