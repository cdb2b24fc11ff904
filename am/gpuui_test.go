package am

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
)

// gpuUIShotEnv names where TestUIPageDrawsGPUUtilisation copies its screenshot (unset: nowhere).
const gpuUIShotEnv = "YARN_AM_GPU_UI_SCREENSHOT"

// gpuUIStatus is a realistic status of a GPU job, 3 minutes in: two TaskExecutors of one GPU
// sampled every 2 s, one busy around 90 % with a dip, one idle after a minute's warm-up, and a third
// whose GPU (a MIG instance) reports no utilisation.
func gpuUIStatus() contract.Status {
	now := time.Date(2026, 11, 27, 14, 3, 0, 0, time.UTC)
	start := now.Add(-3 * time.Minute)
	launched := start.Add(8 * time.Second)
	hist := func(f func(i int) int) *contract.GPUHistory {
		h := &contract.GPUHistory{From: launched.Add(2 * time.Second).UnixMilli(), StepMs: 3000}
		for i := 0; h.From+int64(i)*h.StepMs < now.UnixMilli() && i < contract.MaxHistoryPoints; i++ {
			h.Util = append(h.Util, f(i))
		}
		return h
	}
	busy := hist(func(i int) int {
		if i >= 30 && i < 33 {
			return -1 // a gap in the sampling
		}
		if i >= 40 && i < 44 {
			return 35 // a dip
		}
		return 88 + int(4*math.Sin(float64(i)))
	})
	idle := hist(func(i int) int {
		if i < 20 {
			return 60 + i
		}
		return 0
	})
	pct := func(v float64) *float64 { return &v }
	c := func(n, node, uuid string, idx int) contract.ContainerStatus {
		return contract.ContainerStatus{ID: "container_1_0007_01_00000" + n, Node: node, State: contract.Running,
			Resources:   contract.Capability{"memory-mb": 1024, "vcores": 1, "yarn.io/gpu": 1},
			Infos:       map[string][]contract.Info{"gpu": {{contract.InfoIndex: string(rune('0' + idx)), contract.InfoUUID: uuid}}},
			RequestedAt: start.Add(time.Second), AllocatedAt: start.Add(3 * time.Second), LaunchedAt: launched}
	}
	a := c("2", "127.0.0.2:33875", "GPU-3c89bccf-e452-9a86-6be5-6c893dd85ed0", 0)
	a.GPUs = []contract.GPUStatus{{UUID: "GPU-3c89bccf-e452-9a86-6be5-6c893dd85ed0", Index: 0, Util: pct(91), MemUsedMiB: 60311, MemTotalMiB: 143771,
		PowerW: pct(690.7), MeanUtil: 86.4, IdleShare: 0, Samples: 86, At: now.Add(-time.Second), History: busy}}
	b := c("3", "127.0.0.3:44335", "GPU-b761c404-08dc-2b71-e7aa-f65e639f243b", 0)
	b.GPUs = []contract.GPUStatus{{UUID: "GPU-b761c404-08dc-2b71-e7aa-f65e639f243b", Index: 0, Util: pct(0), MemTotalMiB: 143771,
		PowerW: pct(111.4), MeanUtil: 21.6, IdleShare: 0.69, Samples: 86, At: now.Add(-time.Second), History: idle}}
	m := c("4", "127.0.0.3:44335", "MIG-5a1f0c2e-0000-0000-0000-000000000001", 1)
	m.GPUs = []contract.GPUStatus{{UUID: "MIG-5a1f0c2e-0000-0000-0000-000000000001", Index: 1, MemUsedMiB: 900, MemTotalMiB: 20096, At: now.Add(-time.Second)}}
	return contract.Status{App: "application_1_0007", State: contract.StateRunning, Now: now, Started: start,
		Requirement: contract.Requirement{Instances: 3, Resources: contract.Capability{"memory-mb": 1024, "vcores": 1, "yarn.io/gpu": 1},
			ExternalResources: map[string]string{"gpu": "yarn.io/gpu"}},
		Counts:     contract.Counts{Running: 3},
		Containers: []contract.ContainerStatus{a, b, m},
		GPUUsage:   &contract.GPUUsage{ReservedGPUHours: 0.15, UsedShare: 0.36, IdleShare: 0.56, Samples: 172}}
}

// The page draws one utilisation row per sampled GPU on the timeline's time axis, under its
// container's bar: a line and an area over the GPU's history, a shaded rect per idle spell, nothing
// for a GPU that reports no utilisation (docs/running.md#gpu-utilisation).
func TestUIPageDrawsGPUUtilisation(t *testing.T) {
	chromium := uiChromium(t)
	st := gpuUIStatus()
	dom := renderedPage(t, chromium, st)

	rows := regexp.MustCompile(`<g class="gpu-util" data-container="([^"]+)" data-gpu="(\d+)"[^>]*>(.*?)</g>`).FindAllStringSubmatch(dom, -1)
	require.Len(t, rows, 3, "one row per container GPU")
	byID := map[string]string{}
	for _, r := range rows {
		byID[r[1]] = r[3]
	}
	count := func(id, class string) int {
		return len(regexp.MustCompile(`<(path|rect) [^>]*class="`+class+`"`).FindAllString(byID[id], -1))
	}
	busy, idle, mig := st.Containers[0].ID, st.Containers[1].ID, st.Containers[2].ID
	assert.Equal(t, 1, count(busy, "util-line"), "the busy GPU's line")
	assert.Equal(t, 1, count(busy, "util-area"))
	assert.Equal(t, 0, count(busy, "idle-spell"), "35 %% is low, not idle")
	assert.Equal(t, 2, strings.Count(lineOf(t, byID[busy]), "M"), "the gap in the sampling splits the busy GPU's line in two")
	assert.Equal(t, 1, count(idle, "util-line"))
	assert.Equal(t, 1, count(idle, "idle-spell"), "one idle spell, after the warm-up")
	assert.Contains(t, byID[idle], "idle (under 5 %) for about 1m51s")
	assert.Equal(t, 0, count(mig, "util-line"), "a GPU with no samples draws no line")
	assert.Equal(t, 0, count(mig, "util-area"))
	assert.Equal(t, 0, count(mig, "idle-spell"))
	assert.Contains(t, byID[mig], ">no utilisation<")
	assert.Contains(t, byID[busy], "GPU 0 · mean 86%")
	assert.Contains(t, byID[idle], "0% now · idle 69%")

	// The rows share the timeline's axis: the idle GPU's line starts where its history does, right of
	// the bars' labels and left of their right column.
	x0 := regexp.MustCompile(`^M([0-9.]+) `).FindStringSubmatch(lineOf(t, byID[idle]))
	require.NotNil(t, x0)
	assert.Greater(t, mustFloat(t, x0[1]), 230.0)

	// A job without samples: no row at all.
	st.App = "application_1_0008"
	for i := range st.Containers {
		st.Containers[i].GPUs = nil
	}
	assert.NotContains(t, renderedPage(t, chromium, st), `class="gpu-util"`)

	// The screenshot: the realistic status drawn (copied to $YARN_AM_GPU_UI_SCREENSHOT when set).
	shot := filepath.Join(t.TempDir(), "gpu-ui.png")
	uiScreenshot(t, chromium, gpuUIStatus(), shot)
	fi, err := os.Stat(shot)
	require.NoError(t, err)
	assert.Greater(t, fi.Size(), int64(10_000), "a screenshot with something drawn")
	if to := os.Getenv(gpuUIShotEnv); to != "" {
		data, err := os.ReadFile(shot)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(to, data, 0o644))
		t.Logf("screenshot: %s", to)
	}
}

// lineOf is the d of the util-line path in a row's markup.
func lineOf(t *testing.T, row string) string {
	t.Helper()
	m := regexp.MustCompile(`<path d="([^"]+)" class="util-line"`).FindStringSubmatch(row)
	require.NotNil(t, m, "a util-line in %s", row)
	return m[1]
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	var f float64
	require.NoError(t, json.Unmarshal([]byte(s), &f))
	return f
}

// uiScreenshot saves headless Chromium's screenshot of the page drawing st to path, taken once the
// page drew it (pageInChromium).
func uiScreenshot(t *testing.T, chromium string, st contract.Status, path string) {
	t.Helper()
	b, ctx := pageInChromium(t, chromium, st, 1400, 900)
	png, err := b.Screenshot(ctx)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, png, 0o644))
}
