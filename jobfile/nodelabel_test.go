package jobfile

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNodeLabelKeys: am.node-label and taskexecutor.node-label name one label each, trimmed; left
// out, both are "" (the queue's default partition).
func TestNodeLabelKeys(t *testing.T) {
	j, err := LoadJob(writeJob(t, "[am]\nnode-label = \"cpu-pool\"\n[taskexecutor]\ncommand = \"./worker\"\nnode-label = \" gpu_a100 \"\n"))
	require.NoError(t, err)
	assert.Equal(t, "cpu-pool", j.AM.NodeLabel)
	assert.Equal(t, "gpu_a100", j.TaskExecutor.NodeLabel)

	j, err = LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\n"))
	require.NoError(t, err)
	assert.Equal(t, "", j.AM.NodeLabel)
	assert.Equal(t, "", j.TaskExecutor.NodeLabel)
}

// TestNodeLabelKeysRefuseBadValues: each bad value is named with its key and what is valid.
func TestNodeLabelKeysRefuseBadValues(t *testing.T) {
	for _, c := range []struct{ value, want string }{
		{`""`, `taskexecutor.node-label = "": name a node label`},
		{`"gpu && fast"`, `one label per request, not an expression`},
		{`"gpu||x"`, `one label per request, not an expression`},
		{`"-gpu"`, `not a node label name: letters, digits, '-' and '_'`},
		{`"gpu.x"`, `not a node label name`},
		{`"` + strings.Repeat("g", 300) + `"`, `at most 255 characters, not 300`},
		{`3`, `taskexecutor.node-label = 3: want a string`},
	} {
		_, err := LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\nnode-label = "+c.value+"\n"))
		require.Error(t, err, c.value)
		assert.Contains(t, err.Error(), c.want, c.value)
		assert.Less(t, len(err.Error()), 400, "the message shows a bounded prefix of the value")
	}
	_, err := LoadJob(writeJob(t, "[am]\nnode-label = \"a b\"\n[taskexecutor]\ncommand = \"./worker\"\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `am.node-label = "a b"`)
}

// TestNodeLabelKeyDidYouMean: a misspelt key is unknown, with the right one suggested.
func TestNodeLabelKeyDidYouMean(t *testing.T) {
	_, err := LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\nnode-labels = \"gpu\"\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `did you mean "taskexecutor.node-label"`)
}
