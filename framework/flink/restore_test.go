package flink

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/jobfile"
)

// TestFlinkRestore: [flink] restore is the savepoint the job starts from, handed to the JobManager
// as Flink's execution.savepoint.path; a value that is no URI or absolute path, or restore beside
// that key or its current name execution.state-recovery.path, is refused naming the key.
func TestFlinkRestore(t *testing.T) {
	load := func(restore, config string) (*jobfile.Job, error) {
		p := writeJob(t, "[flink]\nhome = \"flink\"\njar = \"job.jar\"\n"+restore+"\n[flink.config]\n"+config+"\n[taskexecutor]\ninstances = 1\nmemory = 1024\n")
		fakeFlinkHome(t, filepath.Dir(p))
		return jobfile.LoadJob(p)
	}
	for _, ok := range []string{"file:///tmp/sp/savepoint-0a1b2c-0123456789ab", "file:/tmp/sp/savepoint-1", "/tmp/sp/savepoint-1", "hdfs:///savepoints/savepoint-1"} {
		j, err := load("restore = \""+ok+"\"", "")
		require.NoError(t, err, ok)
		assert.Equal(t, ok, specOf(j).Config[keyRestore], ok)
	}
	for bad, why := range map[string]string{
		"sp/savepoint-1": "not a URI or an absolute path",
		"file://":        "no path after file://",
		"":               "without spaces around it",
		" /tmp/x":        "without spaces around it",
	} {
		_, err := load("restore = \""+bad+"\"", "")
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "flink.restore", bad)
		assert.Contains(t, err.Error(), why, bad)
	}
	_, err := load(`restore = "/tmp/a"`, `"execution.savepoint.path" = "/tmp/b"`)
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "give one"), err.Error())
	// The key's current name (Flink 1.20 and 2.x), which Flink reads first: restore would be ignored.
	_, err = load(`restore = "/tmp/a"`, `"execution.state-recovery.path" = "/tmp/b"`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `flink.restore = "/tmp/a" and execution.state-recovery.path = "/tmp/b": give one`)
	assert.Contains(t, err.Error(), "the restore would be ignored")
}
