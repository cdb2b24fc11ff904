package jobfile

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadJobElasticKeys(t *testing.T) {
	j, err := LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\ninstances = 4\ngang = true\n"))
	require.NoError(t, err)
	assert.Equal(t, 4, j.TaskExecutor.MinInstances, "default: a rigid gang")
	assert.Equal(t, DefaultElasticInterval, j.TaskExecutor.ElasticInterval)

	j, err = LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\ninstances = 4\ngang = true\nmin-instances = 2\nelastic-interval = \"15s\"\n"))
	require.NoError(t, err)
	assert.Equal(t, 2, j.TaskExecutor.MinInstances)
	assert.Equal(t, 15*time.Second, j.TaskExecutor.ElasticInterval)

	for body, want := range map[string]string{
		"gang = true\nmin-instances = 0\n":          "taskexecutor.min-instances = 0: want an integer from 1 to taskexecutor.instances = 4",
		"gang = true\nmin-instances = 5\n":          "taskexecutor.min-instances = 5: want an integer from 1 to taskexecutor.instances = 4",
		"gang = true\nmin-instances = \"2\"\n":      `taskexecutor.min-instances = "2": want an integer from 1 to taskexecutor.instances = 4, not a string`,
		"min-instances = 2\n":                       "taskexecutor.min-instances = 2 is set but taskexecutor.gang is not true",
		"gang = true\nelastic-interval = \"5\"\n":   `taskexecutor.elastic-interval = "5": not a duration`,
		"gang = true\nelastic-interval = \"-1s\"\n": `taskexecutor.elastic-interval = "-1s": must be positive`,
		"elastic-interval = \"1m\"\n":               "taskexecutor.elastic-interval = \"1m\" is set but taskexecutor.gang is not true",
		"gang = true\nmin-instance = 2\n":           "min-instances",
	} {
		_, err := LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\ninstances = 4\n"+body))
		assert.ErrorContains(t, err, want, body)
	}
}

func TestDefinesSetTheElasticKeys(t *testing.T) {
	f, err := Read(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\ninstances = 4\ngang = true\n"))
	require.NoError(t, err)
	_, err = f.ApplyDefines([]string{"taskexecutor.min-instances=2", "taskexecutor.elastic-interval=20s"})
	require.NoError(t, err)
	j, err := f.Job()
	require.NoError(t, err)
	assert.Equal(t, 2, j.TaskExecutor.MinInstances)
	assert.Equal(t, 20*time.Second, j.TaskExecutor.ElasticInterval)
}
