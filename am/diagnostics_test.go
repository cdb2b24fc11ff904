package am

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
)

// yarnBoilerplate is what a NodeManager's diagnostics of a failed container look like: its own
// wording, then the end of the container's stderr, which ends in the launcher's log line.
const yarnBoilerplate = "Exception from container-launch.\nContainer id: c1\nExit code: 3\n\n[2026-11-24 04:00:00.000]Container exited with a non-zero exit code 3. Error file: prelaunch.err.\nLast 4096 bytes of stderr :\noops\ntime=\"2026-11-24T04:00:00Z\" level=info msg=\"yarn-am launch: worker exited\" exit_code=3\n"

// A worker's stderr tail replaces YARN's boilerplate: its lines are in the completed event's and the
// status's stderrTail (which only secret holders get: web's TestAnonymousReadersGetNoStderrTail), and
// the container's and the application's diagnostics point to them without quoting them.
func TestCompletionWithStderrTailIsInEventStatusAndDiagnostics(t *testing.T) {
	m := apiAM(t)
	h := m.Handler(testSecret)
	require.Equal(t, 204, post(t, h, "/api/v1/containers/c1/report", "Bearer "+testSecret, `{"infos":{"gpu":[{"index":"2"}]}}`).Code)
	require.Equal(t, 204, post(t, h, "/api/v1/containers/c1/report", "Bearer "+testSecret, `{"infos":null,"workerStderr":"Traceback:\noops","exitCode":3}`).Code)
	m.mu.Lock()
	c1 := m.rec.Get("c1")
	assert.NotEmpty(t, c1.Infos, "the worker's stderr report keeps the infos reported before")
	m.exitedLocked(c1, m.rec.Completed(c1, decision.Exit{Status: 3, Class: decision.Classify(3), Diagnostics: yarnBoilerplate}))
	m.mu.Unlock()

	ev := waitEvent(t, m.events, time.Second, func(e contract.Event) bool { return e.Type == contract.EventCompleted && e.Container == "c1" })
	assert.Equal(t, "Traceback:\noops", ev.StderrTail)
	assert.NotContains(t, ev.Reason, "Last 4096 bytes", "YARN's boilerplate gives way to the worker's own lines")

	var cs contract.ContainerStatus
	for _, c := range m.Status().Containers {
		if c.ID == "c1" {
			cs = c
		}
	}
	assert.Equal(t, "Traceback:\noops", cs.StderrTail)
	assert.Equal(t, book.WorkerStderrDiagnostics, cs.Diagnostics, "the diagnostics point to the tail without quoting it")
	assert.NotContains(t, ev.Reason, "oops")

	d := decision.FailureDiagnostics(decision.Spec{MaxFailures: 1}, []decision.Container{m.rec.Get("c2").Container, c1.Container}, decision.Forgotten{})
	assert.NotContains(t, d, "oops", "the application's diagnostics, which the RM shows to anyone who can list applications, hold no tail")
	assert.NotContains(t, d, "Last 4096 bytes")
	assert.Contains(t, d, "\n- c1 on n1:1 exited with code 3: "+book.WorkerStderrDiagnostics)
	assert.Contains(t, d, "\n- c2 on n2:1 exited with code 3: Exit code: 3")
}

func TestCutTextAtALineOrWord(t *testing.T) {
	assert.Equal(t, "short", decision.CutText("short", 10))
	assert.Equal(t, "one two three …", decision.CutText("one two three fourteen", 18))
	assert.Equal(t, "first line …", decision.CutText("first line\nsecond line", 16))
	long := strings.Repeat("é", 20) // one word longer than the bound: cut inside it, but not inside a rune
	got := decision.CutText(long, 9)
	assert.Equal(t, "éééé …", got)
	d := decision.ContainerFailureLine(decision.Container{ID: "c", Node: "n", Exit: decision.Exit{Status: 1, Class: contract.ExitFailed, Diagnostics: strings.Repeat("word ", 300)}})
	assert.True(t, strings.HasSuffix(d, "word …"), d)
}

// TestDiscoveryFailureIsWordedOnceAndExcludesTheNode: the launcher's message already names the
// resource; the node that lacks the device is excluded at the first failure.
func TestDiscoveryFailureIsWordedOnceAndExcludesTheNode(t *testing.T) {
	m := apiAM(t)
	failure := `discovery failed for resource "gpu": nvidia-smi not found on PATH (/usr/bin:/bin); is the NVIDIA driver installed on this node?`
	require.Equal(t, 204, post(t, m.Handler(testSecret), "/api/v1/containers/c1/report", "Bearer "+testSecret,
		`{"failedResource":"gpu","failure":`+quote(failure)+`}`).Code)
	m.mu.Lock()
	c1 := m.rec.Get("c1")
	m.exitedLocked(c1, m.rec.Completed(c1, decision.Exit{Status: 90, Class: decision.Classify(90), Diagnostics: yarnBoilerplate}))
	add, _ := m.book.Excl.Next()
	m.mu.Unlock()

	cs := m.Status().Containers[0]
	assert.Equal(t, failure, cs.Diagnostics, "said once, without YARN's boilerplate")
	assert.Equal(t, []string{"n1:1"}, add, "excluded at the first discovery failure")
	assert.Equal(t, []string{"n1:1"}, m.policy.Excluded())
	ex := waitEvent(t, m.events, time.Second, is(contract.EventNodeExcluded))
	assert.Equal(t, "node n1:1 excluded: it cannot run this job's workers: nvidia-smi not found on PATH (/usr/bin:/bin); is the NVIDIA driver installed on this node?", ex.Message)
	assert.Equal(t, failure, ex.Reason, "the whole text in the reason")
	assert.Equal(t, "nvidia-smi not found on PATH", book.LacksText("discovery failed for resource \"gpu\": discovery program x.sh 1 failed: exit status 1; stderr: nvidia-smi not found on PATH\nx.sh: could not list"))
	disc := waitEvent(t, m.events, time.Second, is(contract.EventDiscoveryFailed))
	assert.Equal(t, 1, strings.Count(disc.Message, "discovery"), "said once: %s", disc.Message)
	assert.Contains(t, disc.Message, "discovery of resource gpu failed in TaskExecutor c1 on n1:1, the worker was not started: nvidia-smi not found")
	assert.Equal(t, 1, m.Status().Counts.Failed-1, "counts once toward taskexecutor.max-failures (c2 failed before)")
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }
