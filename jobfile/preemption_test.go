package jobfile

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
)

func TestLoadJobPreemptionSignal(t *testing.T) {
	j, err := LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\n"))
	require.NoError(t, err)
	assert.Equal(t, contract.DefaultPreemptionSignal, j.TaskExecutor.PreemptionSignal)
	for _, v := range append([]string{contract.PreemptionSignalNone}, contract.PreemptionSignals...) {
		j, err = LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\npreemption-signal = \""+v+"\"\n"))
		require.NoError(t, err)
		assert.Equal(t, v, j.TaskExecutor.PreemptionSignal)
	}
	_, err = LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\npreemption-signal = \"SIGTERM\"\n"))
	require.Error(t, err)
	for _, want := range []string{`taskexecutor.preemption-signal = "SIGTERM"`, "SIGUSR1, SIGUSR2", `"none"`} {
		assert.Contains(t, err.Error(), want)
	}
	_, err = LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\npreemption-signal = 10\n"))
	assert.ErrorContains(t, err, "taskexecutor.preemption-signal")
}
