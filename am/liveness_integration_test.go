//go:build integration && faults

package am_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/testkit/e2e"
)

// TestLivenessNodeManagerStopOnTheDefaultCluster: on a mini cluster with YARN's default NodeManager
// expiry (10 minutes), 2 TaskExecutors run and the NodeManager of one (not the AM's) is stopped. The
// AM's own liveness check (docs/running.md#liveness) declares its TaskExecutor lost: exactly one
// replacement (one per TaskExecutor the node ran) runs within 15 s of the stop (docs/running.md#liveness; the NodeManager
// started it, by the AM's launchedAt; the wait gives up after 60 s), nothing counts as a failure, and when the RM finally
// declares the node LOST (10 minutes later) no second replacement comes. The workers then end and the
// job succeeds. It owns its cluster (nm-stop changes it): make test-faults starts one for it and runs
// it up to the replacement and the job's success; make test-liveness-expiry runs it with the RM's
// whole expiry waited out (about 13 minutes, too long for make test).
func TestLivenessNodeManagerStopOnTheDefaultCluster(t *testing.T) {
	livenessNodeManagerStop(t, os.Getenv("YARN_AM_LIVENESS_FULL_EXPIRY") == "1")
}

func livenessNodeManagerStop(t *testing.T, waitForTheRMsExpiry bool) {
	if os.Getenv("YARN_AM_NM_EXPIRY_MS") != "600000" {
		t.Fatal("this test needs a mini cluster with YARN's default NodeManager expiry, 600000 ms (make test-faults)")
	}
	release := filepath.Join(t.TempDir(), "release")
	cmd := fmt.Sprintf("while [ ! -e %s ]; do sleep 1; done; ./worker --sleep 1s", release)
	nodes := strings.Split(os.Getenv("YARN_AM_NM_NODES"), ",")
	dirs := strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",")
	require.Len(t, dirs, len(nodes))
	// 2 GPUs each: room for the replacements beside whatever survives. The scheduler places them; the
	// node to stop is the one without the AM, and it must run one TaskExecutor at least (else the job is
	// submitted again: placement is the scheduler's, not what is tested).
	var id string
	var d e2e.StatusDoc
	victim, onVictim := -1, 0
	before := map[string]bool{}
	for try := 1; onVictim == 0; try++ {
		require.LessOrEqual(t, try, 4, "in 3 tries the scheduler never placed a TaskExecutor on the node without the AM")
		if id != "" {
			e2e.KillQuietly(id)
		}
		id = e2e.SubmitDetached(t, writeJob(t, jobSpec{name: "liveness", instances: 2, gpus: 2, command: cmd, maxFailures: 0}))
		d = e2e.WaitFor(t, id, 3*time.Minute, "2 TaskExecutors running", func(d e2e.StatusDoc) bool { return d.AM != nil && d.AM.Counts.Running == 2 })
		for i, dir := range dirs {
			if am, _ := filepath.Glob(filepath.Join(dir, id, "container_*_000001")); len(am) == 0 {
				victim = i
			}
		}
		require.NotEqual(t, -1, victim, "one NodeManager runs no AM")
		clear(before)
		onVictim = 0
		for _, c := range d.AM.Containers {
			before[c.ID] = true
			if c.Node == nodes[victim] && c.State == "RUNNING" {
				onVictim++
			}
		}
		t.Logf("try %d: %s runs %d TaskExecutor(s) on %s, the node without the AM", try, id, onVictim, nodes[victim])
	}

	start := time.Now()
	control(t, "nm-stop", fmt.Sprint(victim))
	d = e2e.WaitFor(t, id, 60*time.Second, "the replacements running", func(d e2e.StatusDoc) bool {
		if d.AM == nil {
			return false
		}
		fresh := 0
		for _, c := range d.AM.Containers {
			if c.State == "RUNNING" && !before[c.ID] {
				fresh++
			}
		}
		return d.AM.Counts.Running == 2 && fresh == onVictim
	})
	detected := time.Since(start)
	replaced := replacementLaunched(t, id, before).Sub(start)
	t.Logf("NodeManager stopped: replacement started by its NodeManager %s later (seen by status polls %s later)", replaced.Round(100*time.Millisecond), detected.Round(time.Second))
	assert.LessOrEqual(t, replaced, 15*time.Second, "the lost TaskExecutor is replaced within 15 s of its NodeManager's stop (docs/running.md#liveness)")
	assert.Equal(t, onVictim, d.AM.Counts.Completed, "the lost TaskExecutors ended")
	assert.Zero(t, d.AM.Counts.Failed, "a lost node is not the worker's failure")
	log := amLog(id)
	assert.Contains(t, log, "am: TaskExecutor lost: its launcher has been silent", "the AM says why:\n%s", log)

	if !waitForTheRMsExpiry {
		require.NoError(t, os.WriteFile(release, nil, 0o644))
		d = e2e.WaitFor(t, id, 3*time.Minute, "the end", func(d e2e.StatusDoc) bool { return e2e.IsEnded(d.Report.State) })
		require.Equal(t, "SUCCEEDED", d.Report.FinalStatus, d.Report.Diagnostics)
		assert.Len(t, taskExecutorContainers(t, id), 2+onVictim, "2 TaskExecutors and one replacement per lost one in all")
		assert.NotContains(t, amLog(id), "failure limit", "max-failures = 0 was never touched")
		return
	}
	// The RM declares the node LOST after its expiry (10 minutes), checked every third of it: up to
	// 13 min 20 s after the stop. The AM reports it, and asks for nothing more.
	deadline := start.Add(15 * time.Minute)
	for !strings.Contains(amLog(id), "state=LOST") {
		require.True(t, time.Now().Before(deadline), "the RM did not report the node LOST within 15 minutes of the stop:\n%s", amLog(id))
		time.Sleep(5 * time.Second)
	}
	t.Logf("the RM declared the node LOST %s after the stop", time.Since(start).Round(time.Second))
	// Give the AM a few heartbeats to act on whatever the RM reported with it.
	time.Sleep(5 * time.Second)
	d = e2e.Status(t, id)
	require.NotNil(t, d.AM)
	assert.Equal(t, 2, d.AM.Counts.Running, "still 2 TaskExecutors")
	assert.Zero(t, d.AM.Counts.Failed)
	assert.Len(t, taskExecutorContainers(t, id), 2+onVictim, "2 TaskExecutors and one replacement per lost one, no second one")

	require.NoError(t, os.WriteFile(release, nil, 0o644))
	d = e2e.WaitFor(t, id, 3*time.Minute, "the end", func(d e2e.StatusDoc) bool { return e2e.IsEnded(d.Report.State) })
	require.Equal(t, "SUCCEEDED", d.Report.FinalStatus, d.Report.Diagnostics)
	assert.Len(t, taskExecutorContainers(t, id), 2+onVictim, "2 TaskExecutors and one replacement per lost one in all")
	assert.NotContains(t, amLog(id), "failure limit", "max-failures = 0 was never touched")
}

// replacementLaunched is when the last of the TaskExecutors not in before was started by its
// NodeManager, by the AM's own clock (status --json: launchedAt), which the test's shares.
func replacementLaunched(t *testing.T, id string, before map[string]bool) time.Time {
	t.Helper()
	r := e2e.YarnAM(t, time.Minute, "status", id, "--json")
	require.Equal(t, 0, r.Code, "status:\n%s", r)
	var d struct {
		AM struct {
			Containers []struct {
				ID         string    `json:"id"`
				LaunchedAt time.Time `json:"launchedAt"`
			} `json:"containers"`
		} `json:"am"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &d), "status --json:\n%s", r)
	var last time.Time
	for _, c := range d.AM.Containers {
		if !before[c.ID] && c.LaunchedAt.After(last) {
			last = c.LaunchedAt
		}
	}
	require.False(t, last.IsZero(), "no replacement with a launch time in:\n%s", r.Stdout)
	return last
}
