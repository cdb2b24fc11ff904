package jobfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadStagedJobIgnoresShippedLocalFiles(t *testing.T) {
	orig, err := LoadJob("../testdata/jobs/gpu-demo.toml")
	if err != nil {
		// bin/worker is built by make demo; without it the original does not load, which is the point.
		require.ErrorContains(t, err, "does not exist")
	}
	data, err := os.ReadFile("../testdata/jobs/gpu-demo.toml")
	require.NoError(t, err)
	// In the AM container the job sits alone in the working directory as job.toml.
	p := filepath.Join(t.TempDir(), "job.toml")
	require.NoError(t, os.WriteFile(p, data, 0o644))
	_, err = LoadJob(p)
	require.ErrorContains(t, err, "does not exist", "LoadJob looks for the local files")

	job, err := LoadStagedJob(p)
	require.NoError(t, err)
	assert.Equal(t, p, job.Path)
	assert.Equal(t, "gpu-demo", job.Name)
	assert.Equal(t, 2, job.TaskExecutor.Instances)
	assert.Equal(t, "./worker", job.TaskExecutor.Command)
	assert.Equal(t, "4", job.TaskExecutor.Env["FAKE_GPU_COUNT"])
	assert.Equal(t, []FileSpec{{Source: "../../bin/worker", Alias: "worker"}, {Source: "../fake-nvidia-smi/nvidia-smi", Alias: "nvidia-smi"}},
		job.TaskExecutor.Files)
	if orig != nil {
		orig.Path, orig.TaskExecutor.Files = job.Path, job.TaskExecutor.Files
		assert.Equal(t, orig, job, "everything else is read as LoadJob reads it")
	}

	// Other problems are still reported, against the staged file's name.
	require.NoError(t, os.WriteFile(p, []byte("[taskexecutor]\nfiles = [\"x\"]\n"), 0o644))
	_, err = LoadStagedJob(p)
	require.ErrorContains(t, err, "taskexecutor.command is missing")
	require.ErrorContains(t, err, p)
}
