//go:build integration

package am_test

import (
	"fmt"
	"os"
	"os/exec"
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
	"github.com/yarn-am/yarn-am/testkit/itest"
)

// TestE2EGPUUtilisationBusyAndIdle runs 2 TaskExecutors × 1 GPU for about 20 s with the fake
// nvidia-smi scripting one's GPU at 93 % and the other's at 0 %, sampled every second
// (docs/running.md#gpu-utilisation). While
// they run, `yarn-am status` shows each container's mean utilisation and the job's idle share, the
// AM's /metrics has the per-GPU gauges, and the idle container (only) gets one idle-gpu event after
// taskexecutor.idle-gpu-warning = 3s; at the end, the finished event and the RM's final diagnostics
// state the GPU-hours reserved and the share used.
func TestE2EGPUUtilisationBusyAndIdle(t *testing.T) {
	bin := e2e.Env(t)
	start := time.Now()
	// The job's own coordination directory: whatever other jobs of the shared cluster hold (their claims
	// are in another directory; the fake GPUs are not real, so sharing one harms nothing), its two
	// containers hold GPU 0 of each node, or GPUs 0 and 1 of one node (claims are per host). The fake
	// reads a GPU's utilisation from FAKE_GPU_UTIL_DIR/<its UUID>: 93 % for GPU 0 of the first node and
	// GPU 1 of the second makes exactly one of the two busy in each of the three placements.
	coord := filepath.Join(t.TempDir(), "coord")
	utilDir := t.TempDir()
	nodes := strings.Split(os.Getenv("YARN_AM_NM_NODES"), ",")
	require.Len(t, nodes, 2, "YARN_AM_NM_NODES: the mini cluster's two NodeManagers")
	busyUUIDs := map[string]bool{}
	for i, n := range nodes {
		u := fakeGPUUUID(t, strings.Split(n, ":")[0], i)
		busyUUIDs[u] = true
		require.NoError(t, os.WriteFile(filepath.Join(utilDir, u), []byte("93\n"), 0o644))
	}
	job := writeJob(t, jobSpec{name: "e2e-gpu-util", instances: 2, gpus: 1, command: "./worker --sleep 20s", maxFailures: 1,
		teExtra: "gpu-sample-interval = \"1s\"\nidle-gpu-warning = \"3s\"", coord: coord, envExtra: fmt.Sprintf("FAKE_GPU_UTIL_DIR = %q\n", utilDir)})
	id := e2e.SubmitDetached(t, job)

	// follow streams every event from the first, the finished event included.
	followed := startFollow(t, bin, id, 4*time.Minute)

	// Both running, both sampled long enough for the idle warning (3 s) and a few alive posts.
	var d e2e.GPUUtilDoc
	deadline := time.Now().Add(3 * time.Minute)
	for {
		d = e2e.GPUUtilStatus(t, id)
		require.False(t, e2e.IsEnded(d.Report.State), "ended before both GPUs were sampled: %s", d.Report.Diagnostics)
		if d.AM != nil && sampledAtLeast(d.AM, 6) == 2 {
			break
		}
		require.True(t, time.Now().Before(deadline), "both containers' GPUs sampled 6 times within 3 minutes; last: %+v", d.AM)
		time.Sleep(time.Second)
	}
	busy, idle := "", ""
	for _, c := range d.AM.Containers {
		if len(c.GPUs) != 1 {
			continue
		}
		g := c.GPUs[0]
		if busyUUIDs[g.UUID] {
			busy = c.ID
			assert.InDelta(t, 93, g.MeanUtil, 0.01, "the busy GPU's mean")
			assert.Zero(t, g.IdleShare, "the busy GPU was never idle")
		} else {
			idle = c.ID
			assert.Zero(t, g.MeanUtil, "the idle GPU's mean")
			assert.Equal(t, 1.0, g.IdleShare, "the idle GPU was always idle")
		}
	}
	require.NotEmpty(t, busy, "a container holds a busy GPU: %+v", d.AM.Containers)
	require.NotEmpty(t, idle, "a container holds an idle GPU: %+v", d.AM.Containers)
	require.NotNil(t, d.AM.GPUUsage)
	assert.InDelta(t, 0.5, d.AM.GPUUsage.IdleShare, 0.2, "about half the samples idle")

	// The text status: the job's GPU time line and the GPU UTIL column.
	r := e2e.YarnAM(t, time.Minute, "status", id)
	require.Equal(t, 0, r.Code, "status:\n%s", r)
	assert.Regexp(t, `GPU time:\s+\d+\.\d{3} GPU-hours reserved, \d+% used \(mean utilisation of \d+ samples\), \d+% idle`, r.Stdout)
	assert.Regexp(t, `CONTAINER\s+NODE\s+STATE\s+RESOURCES\s+INFOS\s+GPU UTIL\s+EXIT`, r.Stdout)
	assert.Regexp(t, regexp.QuoteMeta(busy)+`\s.*\s93%\s`, r.Stdout, "the busy container's mean")
	assert.Regexp(t, regexp.QuoteMeta(idle)+`\s.*\s0%\s`, r.Stdout, "the idle container's mean")

	// The gauges, per container and GPU, on the AM's own /metrics.
	require.NotEmpty(t, d.Report.AMURL, "status --json names the AM's URL while it runs")
	metrics := e2e.HTTPGet(t, strings.TrimSuffix(d.Report.AMURL, "/")+"/metrics")
	for _, c := range d.AM.Containers {
		if len(c.GPUs) != 1 {
			continue
		}
		want := map[string]string{busy: "0.93", idle: "0"}[c.ID]
		labels := fmt.Sprintf(`{container=%q,gpu=%q}`, c.ID, c.GPUs[0].UUID)
		assert.Contains(t, metrics, "yarn_am_gpu_utilization_ratio"+labels+" "+want)
		assert.Contains(t, metrics, "yarn_am_gpu_memory_used_bytes"+labels+" ")
		assert.Contains(t, metrics, "yarn_am_gpu_power_watts"+labels+" ")
	}

	// The end: follow saw one idle-gpu event, the idle container's, and the finished event with the GPU
	// time; the RM's final diagnostics say the same.
	final := e2e.WaitFor(t, id, 3*time.Minute, "the end", func(d e2e.StatusDoc) bool { return e2e.IsEnded(d.Report.State) })
	require.Equal(t, "SUCCEEDED", final.Report.FinalStatus, "diagnostics: %s", final.Report.Diagnostics)
	out := followed()
	var idleLines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "WARNING idle-gpu: ") {
			idleLines = append(idleLines, l)
		}
	}
	require.Len(t, idleLines, 1, "one idle-gpu event:\n%s", out)
	assert.Contains(t, idleLines[0], idle)
	assert.NotContains(t, idleLines[0], busy)
	gpuTime := regexp.MustCompile(`GPU time: (\d+\.\d{3}) GPU-hours reserved, (\d+)% used \(mean utilisation of (\d+) samples\), (\d+)% idle`)
	var finished string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "finished: ") {
			finished = l
		}
	}
	m := gpuTime.FindStringSubmatch(finished)
	require.NotNil(t, m, "the finished event states the GPU time: %q\n%s", finished, out)
	assert.NotEqual(t, "0.000", m[1], "two GPUs for about 20 s are about 0.011 GPU-hours")
	used, err := strconv.Atoi(m[2])
	require.NoError(t, err)
	assert.InDelta(t, 46.5, used, 8, "about half of 93%% used: %s", m[0])
	assert.Regexp(t, gpuTime, final.Report.Diagnostics, "the RM's final diagnostics")
	t.Logf("GPU time at the end: %s; the test took %s", m[0], time.Since(start).Round(time.Second))
}

// fakeGPUUUID is the UUID the fake nvidia-smi gives GPU index of host (it derives it from both).
func fakeGPUUUID(t *testing.T, host string, index int) string {
	t.Helper()
	cmd := exec.Command(itest.FakeSMI(), "--query-gpu=index,uuid", "--format=csv,noheader")
	cmd.Env = append(os.Environ(), "FAKE_GPU_NODE="+host, "FAKE_GPU_COUNT=4")
	out, err := cmd.Output()
	require.NoError(t, err)
	for _, l := range strings.Split(string(out), "\n") {
		if i, u, ok := strings.Cut(l, ", "); ok && i == strconv.Itoa(index) {
			return u
		}
	}
	t.Fatalf("the fake nvidia-smi lists no GPU %d for %s:\n%s", index, host, out)
	return ""
}

// sampledAtLeast counts the containers of st whose every GPU has at least n samples.
func sampledAtLeast(st *contract.Status, n int) int {
	k := 0
	for _, c := range st.Containers {
		ok := len(c.GPUs) > 0
		for _, g := range c.GPUs {
			ok = ok && g.Samples >= n
		}
		if ok {
			k++
		}
	}
	return k
}
