//go:build integration

package flink_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/testkit/e2e"
)

var (
	// startsFromNewer is attempt 2's event when the checkpoint the AM kept is gone and it starts from
	// the newest one left.
	startsFromNewer = regexp.MustCompile(`^AM attempt 2: the Flink job starts from checkpoint (\d+) at (\S+), the newest completed one in (\S+) \(attempt 1 last saw checkpoint (\d+);`)
	counterLine     = regexp.MustCompile(`YARN_AM_FLINK_COUNTER count=(\d+) container=(\S+)`)
	restoredLine    = regexp.MustCompile(`YARN_AM_FLINK_COUNTER restored=(\S+) container=(\S+)`)
	checkpointID    = regexp.MustCompile(`^#(\d+)`)
)

// counterEvery is how many records the counter job's Counter counts between two of its count= lines
// (testdata/flink/job's Job.java). A checkpoint snapshots the count whenever it comes, so a restored
// count can be up to counterEvery-1 above the last line printed before the loss: 1308 restored after
// a last line of 1300 is right.
const counterEvery = 20

// lastCount is the last count the application's TaskManager printed (the job runs one), with its
// container: after a restore the count goes on from the restored one, below the highest printed.
func lastCount(id string) (int, string) {
	last, in := -1, ""
	if lines := tmLines(id, counterLine); len(lines) > 0 {
		m := lines[len(lines)-1]
		last, _ = strconv.Atoi(m[1])
		in = m[2]
	}
	return last, in
}

// TestFlinkJobSurvivesTheLossOfItsAM: first its JobManager's JVM is SIGKILLed and started again in
// place (jobManagerRestartedInPlace). Then: the counter job checkpoints every second to HDFS with
// max-attempts = 2, and its own keys retain its checkpoints on cancellation and keep one of them
// (num-retained = 1, as a job that sets its own retention often does): yarn-am raises num-retained to
// what its reads need, and the JobManager's line says so. Once the AM has seen a few completed
// checkpoints it is stopped (SIGSTOP), so it records nothing more, while its JobManager checkpoints on
// until Flink has deleted the checkpoint the AM kept (read from the staging directory's record); then
// the AM is SIGKILLed. Attempt 2's JobManager starts the job from the newest completed checkpoint
// left, newer than the kept one (its event says which and why), where Flink would have failed the
// application on the kept path: its new TaskManager prints restored=N with 0 < N < the last count
// printed before the kill + counterEvery, the count goes on from there, the status names the
// checkpoint attempt 2 restored, the application stays on attempt 2, and no process of attempt 1's
// JobManager is left (docs/flink.md#when-the-applicationmaster-is-lost). On each tested Flink line.
func TestFlinkJobSurvivesTheLossOfItsAM(t *testing.T) {
	e2e.Env(t)
	fsys := testUserHDFS(t)
	eachFlinkAtOnce(t, func(t *testing.T, v flinkVersion) { testFlinkJobSurvivesTheLossOfItsAM(t, v, fsys) })
}

func testFlinkJobSurvivesTheLossOfItsAM(t *testing.T, v flinkVersion, fsys *client.HDFS) {
	base := fmt.Sprintf("/tmp/yarn-am-flink-recover-%d", time.Now().UnixNano())
	require.NoError(t, fsys.MkdirAll(base, 0o755))
	t.Cleanup(func() { _ = fsys.RemoveAll(base) })
	ckDir := fsys.DefaultFS + base
	job := flinkJobOf(t, v, "flink-recover", 1, 1, []string{"counter"}, fmt.Sprintf(
		"\"execution.checkpointing.interval\" = \"1s\"\n\"execution.checkpointing.dir\" = %q\n"+
			"\"execution.checkpointing.externalized-checkpoint-retention\" = \"RETAIN_ON_CANCELLATION\"\n"+
			"\"execution.checkpointing.num-retained\" = \"1\"", ckDir))
	body, err := os.ReadFile(job)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(job, []byte(strings.Replace(string(body), "max-attempts = 1", "max-attempts = 2", 1)), 0o644))
	id := e2e.SubmitDetached(t, job)

	// A few completed checkpoints, the first of them kept in the staging directory (its event).
	var seen int
	e2e.WaitFor(t, id, 4*time.Minute, "completed checkpoints kept for a later attempt", func(e2e.StatusDoc) bool {
		d, details := flinkDetails(t, id)
		if e2e.IsEnded(d.Report.State) {
			return true
		}
		m := checkpointID.FindStringSubmatch(details["Last checkpoint"])
		if m == nil {
			return false
		}
		seen, _ = strconv.Atoi(m[1])
		return seen >= 3 && strings.Contains(e2e.YarnAM(t, time.Minute, "status", id).Stdout, "is kept in the staging directory for a later AM attempt")
	})
	require.GreaterOrEqual(t, seen, 3, "%s", e2e.ContainerLogs(id))
	assert.Contains(t, amContainerFile(id, "am.stdout"), "yarn-am flink-jobmanager: execution.checkpointing.num-retained: 1 raised to 7 (for a checkpoint every 1s",
		"the job's own num-retained is raised")

	amCID := strings.Replace(id, "application_", "container_", 1) + "_01_000001"
	jobManagerRestartedInPlace(t, id, amCID, fsys)

	// The AM stops recording; its JobManager checkpoints on.
	pids := e2e.ProcsOfContainer(amCID, "yarn-am", "am")
	require.Len(t, pids, 1, "the AM process of %s", amCID)
	require.NoError(t, syscall.Kill(pids[0], syscall.SIGSTOP))
	t.Cleanup(func() { _ = syscall.Kill(pids[0], syscall.SIGCONT) })

	// The checkpoint the AM kept, from its record in the staging directory; Flink deletes it once
	// num-retained newer ones completed.
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
	stopped := time.Now()
	require.Eventually(t, func() bool {
		_, err := fsys.Stat(keptMeta)
		return errors.Is(err, os.ErrNotExist)
	}, 3*time.Minute, 500*time.Millisecond, "Flink deletes the kept checkpoint %s (subsumed) while the AM is stopped", kept.Path)
	subsumed := time.Since(stopped)

	require.NoError(t, syscall.Kill(pids[0], syscall.SIGKILL))
	kill := time.Now()
	before, oldTM := lastCount(id)
	require.Greater(t, before, 0, "the counter printed before the kill")

	// Attempt 2 runs the job again, restored.
	var details map[string]string
	deadline := time.Now().Add(4 * time.Minute)
	for {
		var d e2e.StatusDoc
		d, details = flinkDetails(t, id)
		if e2e.IsEnded(d.Report.State) || details["AM attempt 2"] != "" && details["State"] == "RUNNING" && details["Restored from"] != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("attempt 2 RUNNING the restored job not reached within 4m: %v\n%s", details, e2e.YarnAM(t, time.Minute, "status", id))
		}
		time.Sleep(time.Second)
	}
	running := time.Since(kill)
	require.Contains(t, details["AM attempt 2"], "restored checkpoint", "%v\n%s\n%s", details, e2e.YarnAM(t, time.Minute, "status", id), e2e.ContainerLogs(id))
	assert.Contains(t, details["AM attempt 2"], base)
	assert.Contains(t, details["Restored from"], base)
	// The restored checkpoint is still on HDFS (retained when attempt 1's JobManager stopped).
	restoredPath := details["AM attempt 2"][strings.LastIndex(details["AM attempt 2"], " ")+1:]
	_, err = fsys.Stat(path.Join(strings.TrimPrefix(restoredPath, fsys.DefaultFS), "_metadata"))
	assert.NoError(t, err, "%s/_metadata on HDFS", restoredPath)

	// The new TaskManager restored a count close to the last before the kill, and counts on.
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
	}, 2*time.Minute, time.Second, "a TaskManager of attempt 2 prints what it restored\n%s", e2e.ContainerLogs(id))
	assert.Contains(t, newTM, "_02_", "the TaskManager is attempt 2's")
	assert.Greater(t, restored, 0, "the state was restored")
	// What attempt 1's TaskManager had printed when it ended (its prints reach its file through
	// flink-taskmanager's rolling writer, a moment after the JVM's): the restore is no more, within
	// the records counted since that line (counterEvery).
	before = lastCountOf(id, oldTM)
	assert.Less(t, restored, before+counterEvery, "no more than attempt 1 counted (its last line %d, one every %d records)", before, counterEvery)
	require.Eventually(t, func() bool {
		for _, m := range tmLines(id, counterLine) {
			if n, _ := strconv.Atoi(m[1]); m[2] == newTM && n > restored {
				return true
			}
		}
		return false
	}, 2*time.Minute, time.Second, "attempt 2's TaskManager counts on from %d", restored)

	r := e2e.YarnAM(t, time.Minute, "status", id)
	require.Equal(t, 0, r.Code, "status:\n%s", r)
	assert.Regexp(t, `(?m)^  AM attempt 2: +restored checkpoint \d+, \S+$`, r.Stdout)
	j := e2e.YarnAM(t, time.Minute, "status", id, "--json")
	require.Equal(t, 0, j.Code, "status:\n%s", j)
	var doc struct {
		AM *contract.Status `json:"am"`
	}
	require.NoError(t, json.Unmarshal([]byte(j.Stdout), &doc))
	require.NotNil(t, doc.AM)
	var told string
	for _, e := range doc.AM.Events {
		if e.Type == "flink-job" && strings.HasPrefix(e.Message, "AM attempt 2: the Flink job starts from checkpoint ") {
			told = e.Message
		}
	}
	assert.Contains(t, told, base, "attempt 2's event names the checkpoint: %+v", doc.AM.Events)
	// The kept one is gone: the newest completed one left, newer than it, and the event says why.
	m := startsFromNewer.FindStringSubmatch(told)
	require.NotNil(t, m, "attempt 2 says it starts from a checkpoint newer than the kept one: %q", told)
	from, _ := strconv.ParseInt(m[1], 10, 64)
	assert.Greater(t, from, kept.Checkpoint, "a checkpoint newer than the kept one")
	assert.Equal(t, strconv.FormatInt(kept.Checkpoint, 10), m[4])
	assert.Equal(t, fmt.Sprintf("%s/chk-%d", m[3], from), m[2])
	assert.Equal(t, fmt.Sprintf("restored checkpoint %d, %s", from, m[2]), details["AM attempt 2"])

	// Attempt 1's JobManager ended with its AM (it is in a process group of its own).
	assert.Eventually(t, func() bool { return len(e2e.ProcsOfContainer(amCID, "java", "")) == 0 }, time.Minute, time.Second,
		"attempt 1's JobManager JVM is gone")

	// Still attempt 2: its JobManager's restore did not fail it.
	rep := e2e.RMReport(t, id, 10*time.Second)
	assert.EqualValues(t, 2, rep.GetCurrentApplicationAttemptId().GetAttemptId())
	t.Logf("kept checkpoint %d deleted by Flink %s after the AM stopped; attempt 2 started from checkpoint %d", kept.Checkpoint, subsumed.Round(100*time.Millisecond), from)
	t.Logf("AM SIGKILLed after checkpoint %d; last count before the kill %d (%s); attempt 2 restored %d (%d records not restored) from %s; job RUNNING again in the AM's status %s after the kill (load %s)",
		seen, before, oldTM, restored, before-restored, details["AM attempt 2"], running.Round(100*time.Millisecond), loadAvgE2E())
}

// jobManagerRestartedInPlace SIGKILLs the JobManager's JVM of application id (its AM container amCID)
// while the AM lives: the AM starts it again in the same attempt from the latest completed checkpoint
// on the same ports, its event and the status say so, the TaskManager it had registers with the new
// one and restores a count of at most what it had counted, and counts on; the YARN attempt is still 1
// (docs/flink.md#a-jobmanager-restarted-in-place).
func jobManagerRestartedInPlace(t *testing.T, id, amCID string, fsys *client.HDFS) {
	t.Helper()
	jvms := e2e.ProcsOfContainer(amCID, "java", "")
	require.Len(t, jvms, 1, "the JobManager's JVM in %s", amCID)
	_, details := flinkDetails(t, id)
	oldJob := details["Job"]
	restoredBefore := len(tmLines(id, restoredLine))
	require.NoError(t, syscall.Kill(jvms[0], syscall.SIGKILL))
	kill := time.Now()
	before, tm := lastCount(id)
	require.Greater(t, before, 0, "the counter printed before the kill")

	deadline := time.Now().Add(4 * time.Minute)
	for {
		var d e2e.StatusDoc
		d, details = flinkDetails(t, id)
		if e2e.IsEnded(d.Report.State) || details["JobManager restarts"] != "" && details["State"] == "RUNNING" && details["Job"] != oldJob {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the restarted JobManager's job RUNNING not reached within 4m: %v\n%s\n%s", details, e2e.YarnAM(t, time.Minute, "status", id), e2e.ContainerLogs(id))
		}
		time.Sleep(time.Second)
	}
	running := time.Since(kill)
	require.Regexp(t, `^1 \(last at \S+, from checkpoint \d+ at `, details["JobManager restarts"], "%v\n%s", details, e2e.ContainerLogs(id))
	told := ""
	for _, e := range statusEvents(t, id) {
		if e.Type == "flink-job" && strings.HasPrefix(e.Message, "the JobManager was lost (") {
			told = e.Message
		}
	}
	assert.Regexp(t, `^the JobManager was lost \(its JVM ended before its job did\) while the AM runs: started again in place \(restart 1 of at most 3 within 1h0m0s\), from checkpoint \d+ at \S+`, told)
	assert.Contains(t, amContainerFile(id, "am.stdout"), "yarn-am flink-jobmanager: started again in place after the JobManager was lost: its JVM binds the first one's ports")

	// The TaskManager registered with the new JobManager, restored the checkpoint's count, counts on.
	var restored int
	require.Eventually(t, func() bool {
		lines := tmLines(id, restoredLine)
		for _, m := range lines[min(restoredBefore, len(lines)):] {
			if m[1] != "none" {
				restored, _ = strconv.Atoi(m[1])
				return true
			}
		}
		return false
	}, 2*time.Minute, time.Second, "a TaskManager prints what the restarted job restored\n%s", e2e.ContainerLogs(id))
	assert.Greater(t, restored, 0)
	// The TaskManager's tasks ran on until it noticed the loss; the restore is no more than it had
	// counted before it restored (within counterEvery of its highest line).
	before = countedBefore(id, restoredBefore)
	assert.Less(t, restored, before+counterEvery, "no more than was counted before the restore (its highest line %d, one every %d records)", before, counterEvery)
	var tmAfter string
	require.Eventually(t, func() bool {
		tmAfter = countsOnAfter(id, restoredBefore, restored)
		return tmAfter != ""
	}, 2*time.Minute, time.Second, "the count goes on from %d", restored)
	assert.Equal(t, tm, tmAfter, "the same TaskManager container, registered with the new JobManager")
	rep := e2e.RMReport(t, id, 10*time.Second)
	assert.EqualValues(t, 1, rep.GetCurrentApplicationAttemptId().GetAttemptId(), "the YARN attempt is unchanged")
	// The AM keeps the new job's checkpoints for a later attempt, as it kept the first job's.
	d, _ := flinkDetails(t, id)
	newJob := details["Job"][strings.LastIndex(details["Job"], "(")+1 : len(details["Job"])-1]
	require.Eventually(t, func() bool {
		attrs, err := fsys.Client.GetXAttrs(client.StagingDir(d.Report.User, id), "user.yarn-am.framework-state")
		var kept struct {
			Job string `json:"job"`
		}
		return err == nil && json.Unmarshal([]byte(attrs["user.yarn-am.framework-state"]), &kept) == nil && kept.Job == newJob
	}, 2*time.Minute, time.Second, "the restarted job %s's checkpoints kept in the staging directory", newJob)
	t.Logf("JobManager JVM SIGKILLed at count %d; restarted in place, its job RUNNING %s after the kill, restored %d (load %s)",
		before, running.Round(100*time.Millisecond), restored, loadAvgE2E())
}

// statusEvents are the AM's events as status --json gives them.
func statusEvents(t *testing.T, id string) []contract.Event {
	t.Helper()
	j := e2e.YarnAM(t, time.Minute, "status", id, "--json")
	require.Equal(t, 0, j.Code, "status:\n%s", j)
	var doc struct {
		AM *contract.Status `json:"am"`
	}
	require.NoError(t, json.Unmarshal([]byte(j.Stdout), &doc))
	require.NotNil(t, doc.AM)
	return doc.AM.Events
}

// tmStreams are each container's TaskManager prints, oldest first: its rolled parts
// (docs/flink.md#logs-that-roll), then the file being written; by container directory.
func tmStreams(id string) map[string][]string {
	out := map[string][]string{}
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
		containers, _ := filepath.Glob(filepath.Join(d, id, "*"))
		for _, c := range containers {
			parts, _ := filepath.Glob(filepath.Join(c, "taskmanager.out.*"))
			sort.Slice(parts, func(i, j int) bool { return partNumber(parts[i]) < partNumber(parts[j]) })
			var data []byte
			for _, f := range append(parts, filepath.Join(c, "taskmanager.out")) {
				b, _ := os.ReadFile(f)
				data = append(data, b...)
			}
			out[filepath.Base(c)] = strings.Split(string(data), "\n")
		}
	}
	return out
}

// countsOnAfter returns the container whose prints, after its first k restored lines and a restore
// (k+1st), count above from; "" when none does yet.
func countsOnAfter(id string, k, from int) string {
	for _, lines := range tmStreams(id) {
		seen := 0
		for _, line := range lines {
			if restoredLine.MatchString(line) {
				seen++
				continue
			}
			if m := counterLine.FindStringSubmatch(line); m != nil && seen > k {
				if n, _ := strconv.Atoi(m[1]); n > from {
					return m[2]
				}
			}
		}
	}
	return ""
}

// countedBefore is the highest count printed before the k+1st restored line of the container that
// printed one.
func countedBefore(id string, k int) int {
	for _, lines := range tmStreams(id) {
		seen, best := 0, -1
		for _, line := range lines {
			if restoredLine.MatchString(line) {
				if seen++; seen > k {
					return best
				}
				continue
			}
			if m := counterLine.FindStringSubmatch(line); m != nil {
				best = max(best, func() int { n, _ := strconv.Atoi(m[1]); return n }())
			}
		}
	}
	return -1
}

// lastCountOf is the last count container printed.
func lastCountOf(id, container string) int {
	last := -1
	for _, line := range tmStreams(id)[container] {
		if m := counterLine.FindStringSubmatch(line); m != nil {
			last, _ = strconv.Atoi(m[1])
		}
	}
	return last
}

// partNumber is N of a rolled part NAME.N (0 when it has none).
func partNumber(path string) int {
	n, _ := strconv.Atoi(path[strings.LastIndexByte(path, '.')+1:])
	return n
}
