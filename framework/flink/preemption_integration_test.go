//go:build integration && preemption

package flink_test

// A [flink] job's TaskManager preempted on the PREEMPTION=1 mini cluster (make test-preemption;
// docs/flink.md#preemption): the test job's stateful counter runs in batch with a 10-minute periodic
// checkpoint interval, a job in urgent takes the TaskManager's vcores, and the RM warns the Flink
// job's AM 10 s before the kill. With checkpoint-on-preemption at its default the AM asks the
// JobManager for a checkpoint at the warning, and the job, restarted by Flink on the replacement
// TaskManager, restores it: it loses about the lead time's records. With the key "off" it restarts
// from scratch: it loses every record. The job's min-pause equals its interval, so that Flink takes no
// periodic checkpoint in its first 10 minutes (docs/flink.md#preemption: Flink 1.20 takes the first
// at a random time between the min-pause and the interval after each start, Flink 2.3 one as soon as
// the tasks run again after a restart, and without a min-pause either can come within seconds). The
// two runs take turns, because the scheduler's preemption takes from the newest application of the
// queue first and the cluster holds one such job at a time; they run on Flink 1.20.5 and 2.3.0. The
// test fails, never skips, without the cluster, Flink or the job.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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

// counterRate is the counter mode's records per second at most (a 10 ms sleep per record).
const counterRate = 100

var (
	counterCount = regexp.MustCompile(`YARN_AM_FLINK_COUNTER count=(\d+) container=(\S+)`)
	// The preemption's flink-job events (framework/flink/preempt.go) and the watch's restore.
	ckptOnWarning = regexp.MustCompile(`checkpoint (\d+) completed (\S+) after the preemption warning`)
	restoredFrom  = regexp.MustCompile(`restored from checkpoint (\d+)`)
)

// counterJob writes a [flink] job in batch running the counter on Flink line v: one TaskManager of
// 1 GiB and 8 vcores, a whole NodeManager's, so that with its AM the job holds more than batch's 50%
// and a job in urgent can take the TaskManager back. onPreemption is the checkpoint-on-preemption line
// ("" = the default).
func counterJob(t *testing.T, v flinkVersion, name, onPreemption, checkpoints string) string {
	t.Helper()
	home, jar := flinkInputsOf(t, v)
	body := fmt.Sprintf(`name = %q
queue = "batch"
max-attempts = 1

[flink]
home = %q
jar = %q
args = ["counter"]
%s

[flink.config]
"taskmanager.numberOfTaskSlots" = 1
"execution.checkpointing.interval" = "10 min"
# No periodic checkpoint within 10 minutes of a start, a restart or a checkpoint: the one the
# warning asks for is the only one (docs/flink.md#preemption).
"execution.checkpointing.min-pause" = "10 min"
"state.checkpoints.dir" = %q
"restart-strategy.type" = "fixed-delay"
"restart-strategy.fixed-delay.attempts" = 10
"restart-strategy.fixed-delay.delay" = "1 s"
# A killed TaskManager is noticed in seconds rather than Flink's 50 s.
"heartbeat.interval" = 1000
"heartbeat.timeout" = 10000

[taskexecutor]
instances = 1
memory = 1024
vcores = 8
max-failures = 0
`, name, home, jar, onPreemption, "file://"+checkpoints)
	p := filepath.Join(t.TempDir(), name+".toml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

// urgentJob writes the competitor: one container of 7 vcores in urgent for a few seconds. With its
// AM it asks urgent's 50% (8 vcores), which only a preemption frees, and no more, so that the
// scheduler does not take it back for the Flink job's replacement while it runs.
func urgentJob(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name+".toml")
	require.NoError(t, os.WriteFile(p, []byte(fmt.Sprintf(`name = %q
queue = "urgent"
max-attempts = 1
[am]
memory = 256
[taskexecutor]
instances = 1
command = "sleep 3"
memory = 256
vcores = 7
`, name)), 0o644))
	return p
}

// containerStdout is one TaskManager container's stdout and taskmanager.out (the job's prints,
// docs/flink.md#logs-that-roll) of application id ("" while it has none).
func containerStdout(id, container string) string {
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
		if data, err := os.ReadFile(filepath.Join(d, id, container, "stdout")); err == nil {
			tm, _ := os.ReadFile(filepath.Join(d, id, container, "taskmanager.out"))
			return string(data) + string(tm)
		}
	}
	return ""
}

// preemptedRun is what one run saw.
type preemptedRun struct {
	lastCount int64  // the last count the preempted TaskManager (the first) printed
	restored  string // what the replacement restored: a count, or "none"
	lost      int64
	lead      time.Duration // the AM's warning to its deadline
	events    []contract.Event
}

// preemptCounter waits for the counter job id to count, has an urgent job take its TaskManager, and
// waits for the job to restore on the replacement TaskManager; then it calls restored (nil = none)
// and kills the job.
func preemptCounter(t *testing.T, name, id string, restored func()) preemptedRun {
	t.Helper()
	start := time.Now()
	var first string // the first TaskManager's container
	require.Eventually(t, func() bool {
		for _, m := range tmLines(id, counterCount) {
			if n, _ := strconv.ParseInt(m[1], 10, 64); n >= 300 {
				first = m[2]
				return true
			}
		}
		return false
	}, 4*time.Minute, time.Second, "%s: the counter counted 300 records\n%s", name, e2e.ContainerLogs(id))

	counting := time.Now()
	uid := e2e.SubmitDetached(t, urgentJob(t, name+"-urgent"))
	events := map[uint64]contract.Event{}
	var run preemptedRun
	// The containers YARN preempted: the first TaskManager's, and any replacement the scheduler
	// allocated before the urgent job's container and took back for it.
	preempted := map[string]bool{}
	var restoredIn string
	deadline := time.Now().Add(5 * time.Minute)
	for {
		r := e2e.YarnAM(t, time.Minute, "status", id, "--json")
		require.Equal(t, 0, r.Code, "status:\n%s", r)
		var doc e2e.AMEvents
		require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc), r.Stdout)
		require.False(t, e2e.IsEnded(doc.Report.State), "%s ended: %s\n%s", id, doc.Report.Diagnostics, e2e.ContainerLogs(id))
		if doc.AM != nil {
			for _, e := range doc.AM.Events {
				events[e.ID] = e
				if e.Type == contract.EventCompleted && e.ExitClass == contract.ExitPreempted {
					preempted[e.Container] = true
				}
			}
		}
		if preempted[first] {
			for _, m := range tmLines(id, counterRestored) {
				if !preempted[m[2]] && m[2] != first {
					run.restored, restoredIn = m[1], m[2] // its first start: a later restart would restore again
					break
				}
			}
		}
		if restoredIn != "" {
			break
		}
		require.True(t, time.Now().Before(deadline), "%s: no restore on a replacement TaskManager within 5 minutes (the TaskManager that counted: %s; preempted %v); events %v\n%s", name, first, preempted, events, e2e.ContainerLogs(id))
		time.Sleep(time.Second)
	}
	for _, m := range counterCount.FindAllStringSubmatch(containerStdout(id, first), -1) {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		run.lastCount = max(run.lastCount, n)
	}
	for _, e := range events {
		run.events = append(run.events, e)
		if e.Type == contract.EventPreemptionWarning && e.Container == first {
			run.lead = e.Deadline.Sub(e.Time)
		}
	}
	require.NotZero(t, run.lead, "%s: the AM warned of %s: %v", name, first, events)
	if len(preempted) > 1 {
		t.Logf("%s: YARN preempted %d containers: the TaskManager that counted and replacements allocated before the urgent job's container", name, len(preempted))
	}
	t.Logf("%s: counting %s after its start (or the previous run's restore), restored on the replacement %s later",
		name, counting.Sub(start).Round(time.Second), time.Since(counting).Round(time.Second))
	if restored != nil {
		restored()
	}
	run.lost = run.lastCount
	if run.restored != "none" {
		n, err := strconv.ParseInt(run.restored, 10, 64)
		require.NoError(t, err, run.restored)
		run.lost = run.lastCount - n
	}
	// The next run needs the cluster: this one ends here, and the urgent one has.
	r := e2e.YarnAM(t, 3*time.Minute, "kill", id)
	require.Equal(t, 0, r.Code, "kill:\n%s", r)
	u := e2e.WaitFor(t, uid, 3*time.Minute, "the end", func(d e2e.StatusDoc) bool { return e2e.IsEnded(d.Report.State) })
	assert.Equal(t, "SUCCEEDED", u.Report.FinalStatus, "the urgent job ran: %s", u.Report.Diagnostics)
	return run
}

func flinkEvents(evs []contract.Event) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Type == "flink-job" {
			b.WriteString(e.Message + "\n")
		}
	}
	return b.String()
}

func TestPreemptionCheckpointsAFlinkJob(t *testing.T) {
	e2e.Env(t)
	require.Equal(t, "1", os.Getenv("YARN_AM_PREEMPTION"), "YARN_AM_PREEMPTION is not 1: start the cluster with make test-preemption (PREEMPTION=1)")
	eachFlink(t, testPreemptionCheckpointsAFlinkJob)
}

func testPreemptionCheckpointsAFlinkJob(t *testing.T, v flinkVersion) {
	start := time.Now()

	// The default: a checkpoint at the warning, which the restart restores. The second run's job is
	// submitted once the first restored: its AM and JobManager start meanwhile, and its TaskManager
	// once the first job is killed.
	onID := e2e.SubmitDetached(t, counterJob(t, v, "flink-preempt-checkpoint", "", t.TempDir()))
	var offID string
	on := preemptCounter(t, "flink-preempt-checkpoint", onID, func() {
		offID = e2e.SubmitDetached(t, counterJob(t, v, "flink-preempt-off", `checkpoint-on-preemption = "off"`, t.TempDir()))
	})
	msgs := flinkEvents(on.events)
	require.Contains(t, msgs, "asking for a checkpoint", "the AM asked for a checkpoint at the warning")
	taken := ckptOnWarning.FindStringSubmatch(msgs)
	require.NotNil(t, taken, "the checkpoint completed:\n%s", msgs)
	require.NotEqual(t, "none", on.restored, "the job restored the checkpoint taken at the warning:\n%s", msgs)
	if r := restoredFrom.FindStringSubmatch(msgs); r != nil {
		assert.Equal(t, taken[1], r[1], "the job restored the checkpoint the warning asked for")
	}
	bound := int64(on.lead.Seconds()*counterRate*1.5) + 200
	t.Logf("with the checkpoint on the warning: last count before the kill %d, restored %s, lost %d records (lead %s, checkpoint %s took %s; bound %d)",
		on.lastCount, on.restored, on.lost, on.lead.Round(time.Millisecond), taken[1], taken[2], bound)
	assert.GreaterOrEqual(t, on.lost, int64(0))
	assert.LessOrEqual(t, on.lost, bound, "at most the lead time's records are lost")

	// Off: no checkpoint asked; the min-pause of 10 minutes let Flink take none, so the job starts over.
	off := preemptCounter(t, "flink-preempt-off", offID, nil)
	assert.NotContains(t, flinkEvents(off.events), "asking for a", "nothing asked with the key off")
	assert.Equal(t, "none", off.restored, "without a checkpoint the job restarts from scratch")
	t.Logf("with checkpoint-on-preemption off: last count before the kill %d, restored %s, lost %d records (all of them)", off.lastCount, off.restored, off.lost)
	assert.Greater(t, off.lost, on.lost)
	t.Logf("both runs: %s", time.Since(start).Round(time.Second))
}
