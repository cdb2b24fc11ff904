//go:build integration

package am_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/testkit/e2e"
)

// TestE2ESickGPUIsReplaced runs one TaskExecutor × 1 GPU sampled every second on the mini cluster
// (docs/gpus.md#gpu-health-a-sick-gpu-is-taken-out-of-service). While it runs, the fake nvidia-smi is
// made to read its GPU with an uncorrected ECC error (a health file the test writes): the AM emits a
// gpu-unhealthy event naming the GPU, its node and the field, ends the container (aborted, not a
// failure), and a replacement runs on another GPU; the launcher left the GPU's sick mark in the job's
// coordination directory, which keeps it out of that node's claims.
func TestE2ESickGPUIsReplaced(t *testing.T) {
	e2e.Env(t)
	start := time.Now()
	coord := filepath.Join(t.TempDir(), "coord")
	health := t.TempDir()
	job := writeJob(t, jobSpec{name: "e2e-sick-gpu", instances: 1, gpus: 1, command: "./worker --sleep 10m", maxFailures: 1,
		teExtra: `gpu-sample-interval = "1s"`, coord: coord, fakeGPUs: 2, envExtra: fmt.Sprintf("FAKE_GPU_HEALTH_DIR = %q\n", health)})
	id := e2e.SubmitDetached(t, job)
	t.Cleanup(func() { e2e.YarnAM(t, 3*time.Minute, "kill", id) })

	// sampled is the running container with a sampled GPU, if any.
	sampled := func(st *contract.Status) *contract.ContainerStatus {
		for i, c := range st.Containers {
			if c.State == contract.Running && len(c.GPUs) == 1 && c.GPUs[0].Samples > 0 {
				return &st.Containers[i]
			}
		}
		return nil
	}
	var first contract.ContainerStatus
	deadline := time.Now().Add(3 * time.Minute)
	for {
		d := e2e.GPUUtilStatus(t, id)
		require.False(t, e2e.IsEnded(d.Report.State), "ended before its GPU was sampled: %s", d.Report.Diagnostics)
		if d.AM != nil {
			if c := sampled(d.AM); c != nil {
				first = *c
				break
			}
		}
		require.True(t, time.Now().Before(deadline), "the container's GPU sampled within 3 minutes; last: %+v", d.AM)
		time.Sleep(time.Second)
	}
	sick := first.GPUs[0].UUID
	require.NoError(t, os.WriteFile(filepath.Join(health, sick), []byte("ecc.errors.uncorrected.volatile.total=2\n"), 0o644))
	sickAt := time.Now()

	var d e2e.GPUUtilDoc
	var replacement *contract.ContainerStatus
	deadline = time.Now().Add(2 * time.Minute)
	for {
		d = e2e.GPUUtilStatus(t, id)
		require.False(t, e2e.IsEnded(d.Report.State), "ended: %s", d.Report.Diagnostics)
		if d.AM != nil {
			if c := sampled(d.AM); c != nil && c.ID != first.ID {
				replacement = c
				break
			}
		}
		require.True(t, time.Now().Before(deadline), "a replacement runs with a sampled GPU within 2 minutes of the GPU turning sick; last: %+v", d.AM)
		time.Sleep(time.Second)
	}
	t.Logf("replaced %s after %s: %s on %s (sick GPU %s on %s)", first.ID, time.Since(sickAt).Round(time.Second), replacement.ID, replacement.Node, sick, first.Node)
	assert.NotEqual(t, sick, replacement.GPUs[0].UUID, "the replacement runs on another GPU")
	assert.Empty(t, replacement.GPUs[0].Sick)
	assert.Zero(t, d.AM.Counts.Failed, "a sick GPU is not the worker's failure")

	var ev *contract.Event
	for i, e := range d.AM.Events {
		if e.Type == contract.EventGPUUnhealthy {
			require.Nil(t, ev, "one gpu-unhealthy event: %+v", d.AM.Events)
			ev = &d.AM.Events[i]
		}
	}
	require.NotNil(t, ev, "a gpu-unhealthy event: %+v", d.AM.Events)
	assert.Equal(t, first.ID, ev.Container)
	assert.Equal(t, first.Node, ev.Node)
	assert.Equal(t, sick, ev.Reason)
	assert.Equal(t, contract.SeverityWarning, ev.Severity)
	assert.Contains(t, ev.Message, "is unhealthy: ecc.errors.uncorrected.volatile.total=2")
	for _, c := range d.AM.Containers {
		if c.ID == first.ID {
			assert.Equal(t, contract.Completed, c.State)
			assert.Equal(t, contract.ExitAborted, c.ExitClass)
			assert.Contains(t, c.Diagnostics, "is unhealthy: ecc.errors.uncorrected.volatile.total=2")
		}
	}

	// The launcher's sick mark, in a claim file of the sick GPU's node: what the node's discoveries skip.
	files, err := filepath.Glob(filepath.Join(coord, "claims.*@"+strings.Split(first.Node, ":")[0]+".*"))
	require.NoError(t, err)
	var marks []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "sick ") {
				marks = append(marks, l)
			}
		}
	}
	require.Len(t, marks, 1, "the sick mark in %s: %v", coord, files)
	assert.Regexp(t, `^sick uuid:`+sick+` \d+$`, marks[0])
	t.Logf("the test took %s", time.Since(start).Round(time.Second))
}
