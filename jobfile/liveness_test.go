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
	_, err = LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\nliveness-timeout = \"5s\"\n"))
	assert.ErrorContains(t, err, `taskexecutor.liveness-timeout = "5s": must be at least 10s`)
	_, err = LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\nliveness-timeout = \"soon\"\n"))
	assert.ErrorContains(t, err, `taskexecutor.liveness-timeout = "soon": not a duration`)
}
