//go:build integration

package am_test

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/testkit/e2e"
)

var noticeLine = regexp.MustCompile(`^worker: notice SIGUSR1 (\{.*\})$`)

// TestGangElasticGivesBackIdleGPUs: an elastic gang of 2 one-GPU ranks (min-instances = 1) whose
// fake GPUs read 0 % (the fake nvidia-smi's idle H200 line), sampled every second, with
// taskexecutor.idle-gpu-release = "10s" (docs/gpus.md#idle-gpus-given-back). After 10 s of idle
// samples the AM warns round 0: both ranks' launchers write preemption.json and send SIGUSR1, which
// the workers catch and print with the notice (reason idle-gpu-release, the idle rank named). After
// the grace (the mini cluster's RM sets no max_wait_before_kill: 15 s) the AM releases the idle rank:
// the count goes from 2 to 1 and the gang restarts as round 1 with one rank, nothing replaced or
// counted as failed; that rank ends at once, and the RM's final diagnostics and the finished event
// count the GPU-hours given back.
func TestGangElasticGivesBackIdleGPUs(t *testing.T) {
	bin := e2e.Env(t)
	start := time.Now()
	command := "case $YARN_AM_ROUND in 0) s=3m;; *) s=1s;; esac; exec ./worker --notice --sleep $s"
	id := e2e.SubmitDetached(t, writeJob(t, jobSpec{name: "idle-release", instances: 2, gpus: 1, command: command,
		teExtra: "gang = true\nmin-instances = 1\ngpu-sample-interval = \"1s\"\nidle-gpu-release = \"10s\"\nidle-gpu-warning = \"off\""}))

	followed := startFollow(t, bin, id, 4*time.Minute)

	final := e2e.WaitFor(t, id, 3*time.Minute, "the end", func(d e2e.StatusDoc) bool { return e2e.IsEnded(d.Report.State) })
	out := followed()
	require.Equal(t, "SUCCEEDED", final.Report.FinalStatus, "%s\n%s\n%s", final.Report.Diagnostics, out, e2e.ContainerLogs(id))

	// The AM's side, in order: the warning, the release, the requirement 2 → 1, round 1 at 1.
	lines := strings.Split(out, "\n")
	at := func(what string) (int, string) {
		for i, l := range lines {
			if strings.Contains(l, what) {
				return i, l
			}
		}
		t.Fatalf("follow shows no %q:\n%s", what, out)
		return 0, ""
	}
	iw, warned := at("WARNING idle-gpu-release: ")
	ir, released := at("idle-gpu-released: ")
	ic, _ := at("TaskExecutor requirement changed from 2 to 1 (idle-gpu-release)")
	ig, _ := at("gang restarts as round 1 at 1 TaskExecutors")
	iformed, _ := at("gang round 1 formed: 1 TaskExecutors")
	assert.True(t, iw < ir && ir < ic && ic < ig && ig < iformed, "warned, released, count down, restarted, formed: %d %d %d %d %d", iw, ir, ic, ig, iformed)
	assert.Contains(t, warned, "(taskexecutor.idle-gpu-release = 10s): the 2 ranks of its gang round are told to checkpoint")
	idle := regexp.MustCompile(`container_\S+`).FindString(warned)
	require.NotEmpty(t, idle, warned)
	assert.Contains(t, released, "released TaskExecutor "+idle)
	assert.Contains(t, released, "the job runs with 1 TaskExecutors instead of 2, and the container is not replaced")
	assert.NotContains(t, out, "idle-gpu-kept", "an elastic gang above its minimum gives the GPU back")

	// The workers' side: both ranks of round 0 caught SIGUSR1 with the notice file beside it.
	notices := stdoutLines(id, noticeLine)
	require.Len(t, notices, 2, "both ranks of round 0 got the signal:\n%s", e2e.ContainerLogs(id))
	for c, ls := range notices {
		require.Len(t, ls, 1, "one notice for %s", c)
		var n contract.PreemptionNotice
		require.NoError(t, json.Unmarshal([]byte(noticeLine.FindStringSubmatch(ls[0])[1]), &n), ls[0])
		assert.Equal(t, c, n.Container, "the notice is the container's own")
		assert.Equal(t, contract.NoticeIdleGPURelease, n.Reason)
		assert.Equal(t, []string{idle}, n.Containers, "it names the idle rank")
		require.NotNil(t, n.Round)
		assert.Equal(t, 0, *n.Round)
		assert.Equal(t, contract.DefaultPreemptionWait, n.Deadline.Sub(n.WarnedAt), "the preemption warning's grace")
	}
	assert.Contains(t, notices, idle)

	// 2 ranks started in round 0, 1 in round 1: the released one was not replaced; and SUCCEEDED
	// with max-failures = 0 says that no end counted as a failure.
	launched := 0
	for _, l := range lines {
		if strings.Contains(l, " launched: ") {
			launched++
		}
	}
	assert.Equal(t, 3, launched, "TaskExecutors started:\n%s", out)

	// The final report: the GPU-hours given back, in the finished event and the RM's diagnostics.
	given := regexp.MustCompile(`, (\d+\.\d{3}) GPU-hours given back \(taskexecutor\.idle-gpu-release\)`)
	_, finished := at("finished: ")
	m := given.FindStringSubmatch(finished)
	require.NotNil(t, m, "the finished event counts the GPU-hours given back: %q", finished)
	h, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	assert.Greater(t, h, 0.0, "1 GPU given back for the seconds from the release to the end")
	assert.Less(t, h, 0.05, "at most the few minutes the test ran")
	assert.Regexp(t, given, final.Report.Diagnostics, "the RM's final diagnostics")
	t.Logf("%s; the test took %s", m[0][2:], time.Since(start).Round(time.Second))
}
