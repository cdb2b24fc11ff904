package jobfile

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
)

func TestLoadJobLivenessTimeout(t *testing.T) {
	j, err := LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\n"))
	require.NoError(t, err)
	assert.Equal(t, contract.DefaultLivenessTimeout, j.TaskExecutor.LivenessTimeout)
	j, err = LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\nliveness-timeout = \"2m\"\n"))
	require.NoError(t, err)
	assert.Equal(t, 2*time.Minute, j.TaskExecutor.LivenessTimeout)
	j, err = LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\nliveness-timeout = \"6s\"\n"))
	require.NoError(t, err)
	assert.Equal(t, 6*time.Second, j.TaskExecutor.LivenessTimeout, "three intervals is the shortest")
	_, err = LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\nliveness-timeout = \"5s\"\n"))
	assert.ErrorContains(t, err, `taskexecutor.liveness-timeout = "5s": must be at least 6s (three of the launchers' liveness intervals of 2s)`)
	_, err = LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\nliveness-timeout = \"soon\"\n"))
	assert.ErrorContains(t, err, `taskexecutor.liveness-timeout = "soon": not a duration; use a number with a unit, e.g. "10s" (the default)`)
}
