package jobfile

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
)

func TestLoadJobGPUSampling(t *testing.T) {
	j, err := LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\n"))
	require.NoError(t, err)
	assert.Equal(t, contract.DefaultGPUSampleInterval, j.TaskExecutor.GPUSampleInterval)
	assert.Equal(t, contract.DefaultIdleGPUWarning, j.TaskExecutor.IdleGPUWarning)
	j, err = LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\ngpu-sample-interval = \"1s\"\nidle-gpu-warning = \"3s\"\n"))
	require.NoError(t, err)
	assert.Equal(t, time.Second, j.TaskExecutor.GPUSampleInterval)
	assert.Equal(t, 3*time.Second, j.TaskExecutor.IdleGPUWarning)
	j, err = LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\ngpu-sample-interval = \"off\"\nidle-gpu-warning = \"OFF\"\n"))
	require.NoError(t, err)
	assert.Zero(t, j.TaskExecutor.GPUSampleInterval)
	assert.Zero(t, j.TaskExecutor.IdleGPUWarning)
	_, err = LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\ngpu-sample-interval = \"10\"\n"))
	assert.ErrorContains(t, err, `taskexecutor.gpu-sample-interval = "10": not a duration; use a number with a unit, e.g. "10s" (the default) or "1m", or "off"`)
	_, err = LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\ngpu-sample-interval = \"100ms\"\n"))
	assert.ErrorContains(t, err, `taskexecutor.gpu-sample-interval = "100ms": must be at least 1s, or "off"`)
	_, err = LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\nidle-gpu-warning = 10\n"))
	assert.ErrorContains(t, err, `taskexecutor.idle-gpu-warning = 10: want a string`)
	_, err = LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\nidle-gpu-warnings = \"1m\"\n"))
	assert.ErrorContains(t, err, "idle-gpu-warning")
}

func TestLoadJobIdleGPURelease(t *testing.T) {
	te := "[taskexecutor]\ncommand = \"./worker\"\n"
	j, err := LoadJob(writeJob(t, te))
	require.NoError(t, err)
	assert.Zero(t, j.TaskExecutor.IdleGPURelease, "off by default")
	j, err = LoadJob(writeJob(t, te+"idle-gpu-release = \"30m\"\n"))
	require.NoError(t, err)
	assert.Equal(t, 30*time.Minute, j.TaskExecutor.IdleGPURelease)
	j, err = LoadJob(writeJob(t, te+"gpu-sample-interval = \"1s\"\nidle-gpu-release = \"20s\"\n"))
	require.NoError(t, err)
	assert.Equal(t, 20*time.Second, j.TaskExecutor.IdleGPURelease)
	j, err = LoadJob(writeJob(t, te+"idle-gpu-release = \"off\"\n"))
	require.NoError(t, err)
	assert.Zero(t, j.TaskExecutor.IdleGPURelease)

	for body, want := range map[string]string{
		"idle-gpu-release = \"20\"\n":                                `taskexecutor.idle-gpu-release = "20": not a duration; use a number with a unit, e.g. "30m" or "1h", or "off"`,
		"idle-gpu-release = 20\n":                                    `taskexecutor.idle-gpu-release = 20: want a string`,
		"idle-gpu-release = \"5s\"\n":                                `taskexecutor.idle-gpu-release = "5s": must be at least 10s, or "off"`,
		"idle-gpu-release = \"" + strings.Repeat("9", 60) + "\"\n":   `taskexecutor.idle-gpu-release = "` + strings.Repeat("9", 40) + `...": not a duration`,
		"idle-gpu-release = \"15s\"\n":                               `taskexecutor.idle-gpu-release = "15s": must be at least twice taskexecutor.gpu-sample-interval = "10s" (20s)`,
		"gpu-sample-interval = \"off\"\nidle-gpu-release = \"1h\"\n": `taskexecutor.idle-gpu-release = "1h0m0s" needs GPU samples, but taskexecutor.gpu-sample-interval is "off"`,
		"idle-gpu-releases = \"1h\"\n":                               `did you mean "taskexecutor.idle-gpu-release"`,
	} {
		_, err := LoadJob(writeJob(t, te+body))
		assert.ErrorContains(t, err, want, body)
	}
}

func TestLoadJobSickGPUsPerNode(t *testing.T) {
	j, err := LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\n"))
	require.NoError(t, err)
	assert.Equal(t, contract.DefaultSickGPUsPerNode, j.TaskExecutor.SickGPUsPerNode)
	j, err = LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\nsick-gpus-per-node = 0\n"))
	require.NoError(t, err)
	assert.Zero(t, j.TaskExecutor.SickGPUsPerNode)
	_, err = LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\nsick-gpus-per-node = -1\n"))
	assert.ErrorContains(t, err, "taskexecutor.sick-gpus-per-node = -1: want an integer from 0 to 64 (0: never exclude a node for its sick GPUs)")
	_, err = LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\nsick-gpus-per-node = \"2\"\n"))
	assert.ErrorContains(t, err, `taskexecutor.sick-gpus-per-node = "2": want an integer from 0 to 64, not a string`)
}
