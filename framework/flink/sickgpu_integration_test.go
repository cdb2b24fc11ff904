//go:build integration

package flink_test

import (
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

// counterRestored is the test job's counter starting on a TaskManager (testdata/flink/job: restored=none
// without a checkpoint to restore); the preemption suite reads it too.
var counterRestored = regexp.MustCompile(`YARN_AM_FLINK_COUNTER restored=(\S+) container=(\S+)`)

// TestFlinkSickGPUTaskManagerIsReplaced: a Flink job of one TaskManager with one fake GPU, counting
// with a checkpoint every 2 s, sampled every second; once a checkpoint is on disk the test makes the
// TaskManager's GPU read an uncorrectable ECC error (the fake nvidia-smi's health directory). The AM
// says so in one gpu-unhealthy event, ends the TaskManager's container (aborted: max-failures = 0
// and the job runs on), a replacement TaskManager runs on another GPU, and Flink restores the
// count there from a checkpoint (docs/gpus.md#gpu-health-a-sick-gpu-is-taken-out-of-service).
func TestFlinkSickGPUTaskManagerIsReplaced(t *testing.T) {
	e2e.Env(t)
	eachFlinkAtOnce(t, testFlinkSickGPUTaskManagerIsReplaced)
}

func testFlinkSickGPUTaskManagerIsReplaced(t *testing.T, v flinkVersion) {
	start := time.Now()
	health, checkpoints := t.TempDir(), t.TempDir()
	job := flinkJobOf(t, v, "flink-sick-gpu", 1, 1, []string{"counter"}, fmt.Sprintf(`"execution.checkpointing.interval" = "2 s"
"state.checkpoints.dir" = %q
"restart-strategy.type" = "fixed-delay"
"restart-strategy.fixed-delay.attempts" = 10
"restart-strategy.fixed-delay.delay" = "1 s"
# The lost TaskManager is noticed in seconds rather than Flink's 50 s.
"heartbeat.interval" = 1000
"heartbeat.timeout" = 10000`, "file://"+checkpoints))
	body, err := os.ReadFile(job)
	require.NoError(t, err)
	withSampling := strings.Replace(string(body), "max-failures = 0\n", "max-failures = 0\ngpu-sample-interval = \"1s\"\n", 1)
	require.NotEqual(t, string(body), withSampling, "flinkJobOf's [taskexecutor] table")
	// [taskexecutor.env] is the job file's last table.
	withSampling += fmt.Sprintf("FAKE_GPU_HEALTH_DIR = %q\n", health)
	require.NoError(t, os.WriteFile(job, []byte(withSampling), 0o644))
	id := e2e.SubmitDetached(t, job)
	t.Cleanup(func() { e2e.YarnAM(t, 3*time.Minute, "kill", id) })

	// The TaskManager runs with a sampled GPU and Flink has a checkpoint on disk.
	sampled := func(st *contract.Status, not string) *contract.ContainerStatus {
		for i, c := range st.Containers {
			if c.ID != not && c.State == contract.Running && len(c.GPUs) == 1 && c.GPUs[0].Samples > 0 {
				return &st.Containers[i]
			}
		}
		return nil
	}
	var first contract.ContainerStatus
	deadline := time.Now().Add(4 * time.Minute)
	for {
		d := e2e.GPUUtilStatus(t, id)
		require.False(t, e2e.IsEnded(d.Report.State), "ended: %s\n%s", d.Report.Diagnostics, e2e.ContainerLogs(id))
		done, _ := filepath.Glob(filepath.Join(checkpoints, "*", "chk-*", "_metadata"))
		if d.AM != nil && len(done) > 0 {
			if c := sampled(d.AM, ""); c != nil {
				first = *c
				break
			}
		}
		require.True(t, time.Now().Before(deadline), "a TaskManager with a sampled GPU and a completed checkpoint within 4 minutes; last: %+v\n%s", d.AM, e2e.ContainerLogs(id))
		time.Sleep(time.Second)
	}
	sick := first.GPUs[0].UUID
	require.NoError(t, os.WriteFile(filepath.Join(health, sick), []byte("ecc.errors.uncorrected.volatile.total=1\n"), 0o644))
	sickAt := time.Now()

	// The replacement runs on another GPU and the counter restored its count there.
	var d e2e.GPUUtilDoc
	var replacement *contract.ContainerStatus
	restored := ""
	deadline = time.Now().Add(3 * time.Minute)
	for {
		d = e2e.GPUUtilStatus(t, id)
		require.False(t, e2e.IsEnded(d.Report.State), "ended: %s\n%s", d.Report.Diagnostics, e2e.ContainerLogs(id))
		if d.AM != nil {
			replacement = sampled(d.AM, first.ID)
		}
		if replacement != nil {
			for _, m := range tmLines(id, counterRestored) {
				if m[2] == replacement.ID {
					restored = m[1]
				}
			}
		}
		if restored != "" {
			break
		}
		require.True(t, time.Now().Before(deadline), "a replacement TaskManager restored the count within 3 minutes of the GPU turning sick; last: %+v\n%s", d.AM, e2e.ContainerLogs(id))
		time.Sleep(time.Second)
	}
	t.Logf("replaced %s after %s by %s, which restored count %s (sick GPU %s)", first.ID, time.Since(sickAt).Round(time.Second), replacement.ID, restored, sick)
	n, err := strconv.ParseInt(restored, 10, 64)
	require.NoError(t, err, "the replacement restored a checkpoint, not %q", restored)
	assert.Positive(t, n, "the count kept across the replacement")
	assert.NotEqual(t, sick, replacement.GPUs[0].UUID, "the replacement runs on another GPU")
	assert.Zero(t, d.AM.Counts.Failed, "a sick GPU is not the TaskManager's failure")
	var unhealthy []contract.Event
	for _, e := range d.AM.Events {
		if e.Type == contract.EventGPUUnhealthy {
			unhealthy = append(unhealthy, e)
		}
	}
	require.Len(t, unhealthy, 1, "one gpu-unhealthy event: %+v", d.AM.Events)
	assert.Equal(t, first.ID, unhealthy[0].Container)
	assert.Contains(t, unhealthy[0].Message, "is unhealthy: ecc.errors.uncorrected.volatile.total=1")
	t.Logf("the test took %s", time.Since(start).Round(time.Second))
}
