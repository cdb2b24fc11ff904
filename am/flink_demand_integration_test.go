//go:build integration

package am_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	flink "github.com/yarn-am/yarn-am/framework/flink/flinkdist"
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
	e2eEnv(t)
	eachFlinkAtOnce(t, testFlinkTaskManagersFollowTheJobsDemand)
}

func testFlinkTaskManagersFollowTheJobsDemand(t *testing.T, v flinkVersion) {
	job := flinkJobOf(t, v, "flink-demand", 3, 1, []string{"stream"}, `"jobmanager.scheduler" = "adaptive"
"parallelism.default" = 2
"jobmanager.adaptive-scheduler.scaling-interval.min" = "0 s"
"jobmanager.adaptive-scheduler.resource-stabilization-timeout" = "5 s"
"slot.idle.timeout" = "5 s"
"restart-strategy.type" = "fixed-delay"
"restart-strategy.fixed-delay.attempts" = 100
"restart-strategy.fixed-delay.delay" = "1 s"
`+v.reactive)
	body, err := os.ReadFile(job)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(job, []byte(strings.Replace(string(body), "[flink]\n", "[flink]\ntaskmanagers = \"demand\"\n", 1)), 0o644))
	start := time.Now()
	id := submitDetached(t, job, "-D", "resourcemanager.taskmanager-timeout=5 s")

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
	running := func(d statusDoc) map[string]bool {
		out := map[string]bool{}
		for _, c := range d.AM.Containers {
			if c.State == "RUNNING" {
				out[c.ID] = true
			}
		}
		return out
	}
	d := waitFor(t, id, 5*time.Minute, "the job RUNNING at parallelism 2 on 2 TaskManagers", func(d statusDoc) bool {
		return isEnded(d.Report.State) || d.AM != nil && len(at("2")) == 2 && len(running(d)) == 2
	})
	require.Len(t, at("2"), 2, containerLogs(id))
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
	r := yarnAM(t, time.Minute, "scale", id, "3")
	require.Equal(t, 0, r.code, "scale 3:\n%s", r)
	d = waitFor(t, id, 4*time.Minute, "the job rescaled to 3 on 3 TaskManagers", func(d statusDoc) bool {
		return isEnded(d.Report.State) || len(at("3")) == 3 && len(running(d)) == 3
	})
	require.Len(t, at("3"), 3, containerLogs(id))
	assert.Equal(t, 3, d.AM.Requirement.Instances)
	t.Logf("measured: yarn-am scale 3 -> the job at parallelism 3 on 3 TaskManagers: %s (load %s)", time.Since(t0).Round(time.Second), loadAvgE2E())

	t1 := time.Now()
	r = yarnAM(t, time.Minute, "scale", id, "1")
	require.Equal(t, 0, r.code, "scale 1:\n%s", r)
	assert.Contains(t, r.stdout, "rescales to at most 1 slots first", "scale says the containers go after the rescale")
	var atOne string
	d = waitFor(t, id, 4*time.Minute, "the job at parallelism 1 and 2 TaskManagers released", func(d statusDoc) bool {
		for c := range at("1") {
			atOne = c
		}
		return isEnded(d.Report.State) || atOne != "" && len(running(d)) == 1 && d.AM.Requirement.Instances == 1
	})
	require.NotEmpty(t, atOne, containerLogs(id))
	require.Len(t, running(d), 1, containerLogs(id))
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
		r := yarnAM(t, time.Minute, "status", id)
		for _, line := range strings.Split(r.stdout, "\n") {
			if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && k == name {
				value = strings.TrimSpace(v)
				return true
			}
		}
		return false
	}, time.Minute, time.Second, "the Flink details show %q", name)
	return value
}
