//go:build integration

package flink_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	flink "github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/testkit/e2e"
)

// TestFlinkTaskManagersFollowTheJobsDemand: with [flink] taskmanagers = "demand" and the adaptive
// scheduler, the AM runs as many TaskManagers as the stream job's slots need (parallelism.default
// 2, one slot each: 2 of instances = 3); yarn-am scale 3 raises the job's upper bound and the count
// together; yarn-am scale 1 rescales the job first, and the two TaskManagers it left idle are released
// after resourcemanager.taskmanager-timeout (5 s here), never the one that runs the job's task
// (docs/flink.md#taskmanagers-on-demand). Flink's JobMaster keeps a slot the rescale freed for
// slot.idle.timeout (50 s by default) before the TaskManager reports it free; 5 s here too, so the
// scale-down is not a minute of waiting. On each tested Flink line.
func TestFlinkTaskManagersFollowTheJobsDemand(t *testing.T) {
	e2e.Env(t)
	eachFlinkAtOnce(t, testFlinkTaskManagersFollowTheJobsDemand)
}

func testFlinkTaskManagersFollowTheJobsDemand(t *testing.T, v flinkVersion) {
	job := demandJob(t, v, "flink-demand", 3, `"slot.idle.timeout" = "5 s"`+"\n", "")
	start := time.Now()
	id := e2e.SubmitDetached(t, job, "-D", "resourcemanager.taskmanager-timeout=5 s")

	// The containers whose subtasks opened at parallelism p.
	at := func(p string) map[string]bool {
		out := map[string]bool{}
		for _, l := range tmLines(id, flinkParallism) {
			if l[2] == p {
				out[l[3]] = true
			}
		}
		return out
	}
	running := func(d e2e.StatusDoc) map[string]bool {
		out := map[string]bool{}
		for _, c := range d.AM.Containers {
			if c.State == "RUNNING" {
				out[c.ID] = true
			}
		}
		return out
	}
	d := e2e.WaitFor(t, id, 5*time.Minute, "the job RUNNING at parallelism 2 on 2 TaskManagers", func(d e2e.StatusDoc) bool {
		return e2e.IsEnded(d.Report.State) || d.AM != nil && len(at("2")) == 2 && len(running(d)) == 2
	})
	require.Len(t, at("2"), 2, e2e.ContainerLogs(id))
	assert.Equal(t, 2, d.AM.Requirement.Instances, "the demand, 2 slots, declared 2 TaskManagers of instances = 3")
	assert.Len(t, running(d), 2)
	assert.Regexp(t, `yarn-am am: starting"?[^\n]*\binstances=1\b`, amContainerFile(id, "am.stderr"),
		"the AM's start says the count it declares first, min-instances, not instances = 3")
	t.Logf("measured: submit -> the job at parallelism 2 on 2 TaskManagers: %s (load %s)", time.Since(start).Round(time.Second), loadAvgE2E())

	rest := &flink.REST{URL: flinkUI(t, id)}
	jobs, err := rest.Jobs(context.Background())
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	bounds, err := rest.ResourceRequirements(context.Background(), jobs[0].ID)
	require.NoError(t, err, "the adaptive scheduler answers its resource requirements")
	for v, b := range bounds {
		assert.Equal(t, 2, b.Upper, "vertex %s: parallelism.default is the upper bound", v)
	}
	tms, err := rest.TaskManagers(context.Background())
	require.NoError(t, err)
	for _, tm := range tms {
		assert.True(t, running(d)[tm.ID], "Flink's TaskManager id %s is its container's (taskmanager.resource-id)", tm.ID)
	}
	assert.Contains(t, flinkDetail(t, id, "Slots needed"), "2")

	t0 := time.Now()
	r := e2e.YarnAM(t, time.Minute, "scale", id, "3")
	require.Equal(t, 0, r.Code, "scale 3:\n%s", r)
	d = e2e.WaitFor(t, id, 4*time.Minute, "the job rescaled to 3 on 3 TaskManagers", func(d e2e.StatusDoc) bool {
		return e2e.IsEnded(d.Report.State) || len(at("3")) == 3 && len(running(d)) == 3
	})
	require.Len(t, at("3"), 3, e2e.ContainerLogs(id))
	assert.Equal(t, 3, d.AM.Requirement.Instances)
	t.Logf("measured: yarn-am scale 3 -> the job at parallelism 3 on 3 TaskManagers: %s (load %s)", time.Since(t0).Round(time.Second), loadAvgE2E())

	t1 := time.Now()
	r = e2e.YarnAM(t, time.Minute, "scale", id, "1")
	require.Equal(t, 0, r.Code, "scale 1:\n%s", r)
	assert.Contains(t, r.Stdout, "rescales to at most 1 slots first", "scale says the containers go after the rescale")
	var atOne string
	d = e2e.WaitFor(t, id, 4*time.Minute, "the job at parallelism 1 and 2 TaskManagers released", func(d e2e.StatusDoc) bool {
		for c := range at("1") {
			atOne = c
		}
		return e2e.IsEnded(d.Report.State) || atOne != "" && len(running(d)) == 1 && d.AM.Requirement.Instances == 1
	})
	require.NotEmpty(t, atOne, e2e.ContainerLogs(id))
	require.Len(t, running(d), 1, e2e.ContainerLogs(id))
	assert.True(t, running(d)[atOne], "the TaskManager that runs the job's task (%s) is the one kept", atOne)
	assert.Equal(t, 0, d.AM.Counts.Failed, "released, not failed")
	t.Logf("measured: yarn-am scale 1 -> the job at parallelism 1 and 2 idle TaskManagers released: %s (load %s)", time.Since(t1).Round(time.Second), loadAvgE2E())
	jobs, err = rest.Jobs(context.Background())
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	assert.Equal(t, "RUNNING", jobs[0].State, "the job runs on after the scale-down")
}

// flinkDetail is the value of one line of the Flink details in the AM's status ("" when absent).
func flinkDetail(t *testing.T, id, name string) string {
	t.Helper()
	var value string
	require.Eventually(t, func() bool {
		r := e2e.YarnAM(t, time.Minute, "status", id)
		for _, line := range strings.Split(r.Stdout, "\n") {
			if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && k == name {
				value = strings.TrimSpace(v)
				return true
			}
		}
		return false
	}, time.Minute, time.Second, "the Flink details show %q", name)
	return value
}

// TestFlinkDemandScaleInReleasesFreedTaskManagersAtOnce: at yarn-am's defaults (no
// slot.idle.timeout, no resourcemanager.taskmanager-timeout in the job), yarn-am scale 1 of a
// checkpointing job in demand mode releases the TaskManager the rescale freed within 45 s, where
// Flink's own defaults held it about 90 s (the JobMaster's slot.idle.timeout of 50 s, then the
// AM's wait of the 30 s taskmanager-timeout): the JobManager runs with yarn-am's slot.idle.timeout
// of 10 s and the AM releases a TaskManager on the reads that find its slots free. The release is an
// info event, "released: no longer needed", not a warning of a container stopped with exit status
// -105; and the rescale's own restore of the latest checkpoint is told as the rescale carrying its
// state over, never as "restored from checkpoint N" (docs/flink.md#taskmanagers-on-demand). On each
// tested Flink line, both at once.
func TestFlinkDemandScaleInReleasesFreedTaskManagersAtOnce(t *testing.T) {
	e2e.Env(t)
	eachFlinkAtOnce(t, testFlinkDemandScaleInReleasesFreedTaskManagersAtOnce)
}

func testFlinkDemandScaleInReleasesFreedTaskManagersAtOnce(t *testing.T, v flinkVersion) {
	job := demandJob(t, v, "flink-demand-scalein", 2, `"execution.checkpointing.interval" = "2 s"`+"\n", "")
	id := e2e.SubmitDetached(t, job)

	running := func(d e2e.StatusDoc) map[string]bool {
		out := map[string]bool{}
		for _, c := range d.AM.Containers {
			if c.State == "RUNNING" {
				out[c.ID] = true
			}
		}
		return out
	}
	e2e.WaitFor(t, id, 5*time.Minute, "the job RUNNING on 2 TaskManagers", func(d e2e.StatusDoc) bool {
		return e2e.IsEnded(d.Report.State) || d.AM != nil && len(running(d)) == 2
	})
	rest := &flink.REST{URL: flinkUI(t, id)}
	var jobID string
	require.Eventually(t, func() bool {
		jobs, err := rest.Jobs(context.Background())
		if err != nil || len(jobs) != 1 || jobs[0].State != "RUNNING" {
			return false
		}
		jobID = jobs[0].ID
		d, err := rest.JobDetail(context.Background(), jobID)
		if err != nil || d.Parallelism() != 2 {
			return false
		}
		cp, err := rest.Checkpoints(context.Background(), jobID)
		return err == nil && cp.Latest.Completed != nil // the rescale has a checkpoint to restore
	}, 3*time.Minute, time.Second, "the job at parallelism 2 with a completed checkpoint\n%s", e2e.ContainerLogs(id))

	t1 := time.Now()
	r := e2e.YarnAM(t, time.Minute, "scale", id, "1")
	require.Equal(t, 0, r.Code, "scale 1:\n%s", r)
	assert.Contains(t, r.Stdout, "once Flink frees their slots (slot.idle.timeout = 10 s)", "scale says what the release waits for")
	var released contract.Event
	e2e.WaitFor(t, id, 3*time.Minute, "a TaskManager released", func(d e2e.StatusDoc) bool {
		for _, e := range statusEvents(t, id) {
			if e.Type == contract.EventCompleted {
				released = e
				return true
			}
		}
		return e2e.IsEnded(d.Report.State)
	})
	took := released.Time.Sub(t1)
	t.Logf("measured: yarn-am scale 1 -> the freed TaskManager's container released: %s (load %s)", took.Round(time.Second), loadAvgE2E())
	require.NotEmpty(t, released.Container, e2e.ContainerLogs(id))
	assert.LessOrEqual(t, took, 45*time.Second, "released well before Flink's defaults' ~90 s")
	assert.Equal(t, contract.SeverityInfo, released.Severity, "a release the AM was asked for is no warning: %s", released.Message)
	assert.Contains(t, released.Message, "released: no longer needed")
	assert.NotContains(t, released.Message, "stopped by the ApplicationMaster")

	d := e2e.WaitFor(t, id, time.Minute, "one TaskManager left", func(d e2e.StatusDoc) bool {
		return e2e.IsEnded(d.Report.State) || len(running(d)) == 1 && d.AM.Requirement.Instances == 1
	})
	assert.Equal(t, 0, d.AM.Counts.Failed, "released, not failed")
	// The job runs on at parallelism 1, and the rescale's restore is told as such.
	var msgs string
	require.Eventually(t, func() bool {
		var b strings.Builder
		for _, e := range statusEvents(t, id) {
			if e.Type == "flink-job" {
				b.WriteString(e.Message + "\n")
			}
		}
		msgs = b.String()
		return strings.Contains(msgs, "its rescale carried its state over from checkpoint")
	}, time.Minute, time.Second, "the rescale's restore is told")
	assert.NotContains(t, msgs, "restored from checkpoint", "a rescale's restore is not a recovery")
	assert.NotContains(t, msgs, "<checkpoint-not-externally-addressable>")
	jd, err := rest.JobDetail(context.Background(), jobID)
	require.NoError(t, err)
	assert.Equal(t, 1, jd.Parallelism())
	assert.Equal(t, "RUNNING", jd.State, "the job runs on after the scale-in")
	assert.Contains(t, amContainerFile(id, "am.stdout"), "slot.idle.timeout: 10 s (default of yarn-am", "the JobManager says the key yarn-am set")
	for _, e := range statusEvents(t, id) {
		assert.False(t, e.Type == contract.EventCompleted && e.Severity != contract.SeverityInfo, "no warning of a completed container: %s", e.Message)
	}
}

// demandJob writes the stream job in demand mode ([flink] taskmanagers = "demand") on the adaptive
// scheduler: parallelism.default 2, one slot per TaskManager, instances TaskExecutors at most, a
// rescale without delay, restarts on failure; keys are more [flink.conf] lines, and teExtra more
// [taskexecutor] lines (after its max-failures).
func demandJob(t *testing.T, v flinkVersion, name string, instances int, keys, teExtra string) string {
	t.Helper()
	job := flinkJobOf(t, v, name, instances, 1, []string{"stream"}, `"jobmanager.scheduler" = "adaptive"
"parallelism.default" = 2
"jobmanager.adaptive-scheduler.scaling-interval.min" = "0 s"
"jobmanager.adaptive-scheduler.resource-stabilization-timeout" = "5 s"
"restart-strategy.type" = "fixed-delay"
"restart-strategy.fixed-delay.attempts" = 100
"restart-strategy.fixed-delay.delay" = "1 s"
`+keys+v.reactive)
	body, err := os.ReadFile(job)
	require.NoError(t, err)
	s := strings.Replace(string(body), "[flink]\n", "[flink]\ntaskmanagers = \"demand\"\n", 1)
	if teExtra != "" {
		require.Contains(t, s, "max-failures = 0\n")
		s = strings.Replace(s, "max-failures = 0\n", "max-failures = 0\n"+teExtra, 1)
	}
	require.NoError(t, os.WriteFile(job, []byte(s), 0o644))
	return job
}
