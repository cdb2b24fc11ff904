package jobfile

import (
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
