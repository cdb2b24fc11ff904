//go:build integration

package flink_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	flink "github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/testkit/e2e"
)

// TestFlinkIdleGPUTaskManagerIsGivenBack: a Flink job in demand mode on the adaptive scheduler,
// parallelism 2 on 2 TaskManagers of one fake GPU each, whose GPUs read 0 % (the fake nvidia-smi's
// idle line), sampled every second, with taskexecutor.idle-gpu-release = "10s"
// (docs/gpus.md#idle-gpus-given-back). After 10 s idle the AM warns one TaskManager as a preemption
// (the job's checkpoint); after the grace it has the job rescaled down by that TaskManager's slot
// (its upper bound 1, the path yarn-am scale takes), and once Flink freed a TaskManager's slots it
// releases that container, the idle one first: idle-gpu-released, the requirement 2 → 1, the
// container's end an info release, nothing failed, and the job runs on at parallelism 1 on 1
// TaskManager, which keeps its GPU (idle-gpu-kept: the fewest). Stopped with a savepoint, the final
// report counts the GPU-hours given back. On Flink 1.20.5 and 2.3.0, both at once.
func TestFlinkIdleGPUTaskManagerIsGivenBack(t *testing.T) {
	e2e.Env(t)
	eachFlinkAtOnce(t, testFlinkIdleGPUTaskManagerIsGivenBack)
}

func testFlinkIdleGPUTaskManagerIsGivenBack(t *testing.T, v flinkVersion) {
	start := time.Now()
	job := demandJob(t, v, "flink-idle-gpu", 2, `"execution.checkpointing.interval" = "2 s"`+"\n",
		"gpu-sample-interval = \"1s\"\nidle-gpu-release = \"10s\"\nidle-gpu-warning = \"off\"\n")
	id := e2e.SubmitDetached(t, job)
	t.Cleanup(func() { e2e.YarnAM(t, 3*time.Minute, "kill", id) })

	of := func(evs []contract.Event, typ contract.EventType) []contract.Event {
		var out []contract.Event
		for _, e := range evs {
			if e.Type == typ {
				out = append(out, e)
			}
		}
		return out
	}
	var evs []contract.Event
	var d e2e.StatusDoc
	deadline := time.Now().Add(4 * time.Minute)
	for {
		d = e2e.Status(t, id)
		require.False(t, e2e.IsEnded(d.Report.State), "ended: %s\n%s", d.Report.Diagnostics, e2e.ContainerLogs(id))
		require.True(t, time.Now().Before(deadline), "an idle TaskManager given back within 4 minutes; events:\n%s", eventLines(evs))
		if d.AM == nil { // the AM not up yet
			time.Sleep(time.Second)
			continue
		}
		evs = statusEvents(t, id)
		if len(of(evs, contract.EventIdleGPUReleased)) > 0 && len(of(evs, contract.EventCompleted)) > 0 && d.AM.Requirement.Instances == 1 {
			break
		}
		time.Sleep(time.Second)
	}
	warned := of(evs, contract.EventIdleGPURelease)
	require.Len(t, warned, 1, eventLines(evs))
	idle := warned[0].Container
	assert.Contains(t, warned[0].Message, "(taskexecutor.idle-gpu-release = 10s)")
	released := of(evs, contract.EventIdleGPUReleased)
	require.Len(t, released, 1)
	gone := released[0].Container
	if gone != idle {
		// Flink chose the slot its rescale keeps, on the idle TaskManager: the other one went, and
		// the event says so.
		assert.Contains(t, released[0].Message, "the job's rescale left it rather than "+idle)
	}
	assert.Contains(t, released[0].Message, "the job runs with 1 TaskExecutors instead of 2")
	ended := of(evs, contract.EventCompleted)
	require.Len(t, ended, 1, eventLines(evs))
	assert.Equal(t, gone, ended[0].Container)
	assert.Equal(t, contract.SeverityInfo, ended[0].Severity)
	assert.Contains(t, ended[0].Message, "released: no longer needed")
	msgs := eventLines(evs)
	assert.Contains(t, msgs, "the GPUs of "+idle+" stayed idle (taskexecutor.idle-gpu-release)", "the job's rescale says why")
	assert.Contains(t, msgs, "TaskExecutor requirement changed from 2 to 1")
	// The notice's checkpoint (or, when the job is not RUNNING yet, why none was taken), told as
	// the AM's own giving back: after the job's name when it runs ("Flink job <name> (<id>): yarn-am
	// gives back ...; asking for a checkpoint"), alone when there is no job to name.
	assert.Regexp(t, `(?m)^(info|warning) flink-job (Flink job [^\n]*: )?yarn-am gives back `+regexp.QuoteMeta(idle)+` for its idle GPUs`, msgs,
		"the notice, told as the AM's own")
	assert.NotContains(t, msgs, "YARN will preempt", "no preemption: the AM gives the TaskManager back")
	t.Logf("measured: submit -> a TaskManager given back: %s (warned %s after the submit, released %s after the warning; the idle one released: %v; load %s)",
		time.Since(start).Round(time.Second), warned[0].Time.Sub(start).Round(time.Second), released[0].Time.Sub(warned[0].Time).Round(time.Second), gone == idle, loadAvgE2E())

	// The job runs on at parallelism 1, on the TaskManager left, which keeps its GPU.
	rest := &flink.REST{URL: flinkUI(t, id)}
	require.Eventually(t, func() bool {
		jobs, err := rest.Jobs(context.Background())
		if err != nil || len(jobs) != 1 {
			return false
		}
		jd, err := rest.JobDetail(context.Background(), jobs[0].ID)
		return err == nil && jd.State == "RUNNING" && jd.Parallelism() == 1
	}, 2*time.Minute, time.Second, "the job RUNNING at parallelism 1")
	d = e2e.Status(t, id)
	assert.Equal(t, 1, d.AM.Requirement.Instances)
	assert.Zero(t, d.AM.Counts.Failed, "a release is no failure")
	require.Eventually(t, func() bool {
		for _, e := range statusEvents(t, id) {
			if e.Type == contract.EventIdleGPUKept && e.Container != gone && strings.Contains(e.Message, "the Flink job runs on 1 TaskManager(s), the fewest") {
				return true
			}
		}
		return false
	}, time.Minute, time.Second, "the TaskManager left keeps its GPU, saying why")

	// Stopped with a savepoint: the final report counts the GPU-hours given back.
	r := e2e.YarnAM(t, 5*time.Minute, "stop", id, "--savepoint", "file://"+t.TempDir(), "--timeout", "4m")
	require.Equal(t, 0, r.Code, "stop:\n%s", r)
	final := e2e.WaitFor(t, id, 3*time.Minute, "the end", func(d e2e.StatusDoc) bool { return e2e.IsEnded(d.Report.State) })
	require.Equal(t, "SUCCEEDED", final.Report.FinalStatus, final.Report.Diagnostics)
	m := regexp.MustCompile(`(\d+\.\d{3}) GPU-hours given back \(taskexecutor\.idle-gpu-release\)`).FindStringSubmatch(final.Report.Diagnostics)
	require.NotNil(t, m, "the final diagnostics count the GPU-hours given back: %q", final.Report.Diagnostics)
	h, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	assert.Greater(t, h, 0.0)
	assert.Less(t, h, 0.05, "at most the minutes the test ran")
	t.Logf("%s; the test took %s", m[0], time.Since(start).Round(time.Second))
}

// eventLines are the events' types and messages, one a line.
func eventLines(evs []contract.Event) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "%s %s %s\n", e.Severity, e.Type, e.Message)
	}
	return b.String()
}
