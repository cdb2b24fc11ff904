package jobfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/container/contract"
)

// fakeFlinkHome makes the parts of a Flink home the job file checks for.
func fakeFlinkHome(t *testing.T, dir string) {
	t.Helper()
	for _, d := range []string{"lib", "plugins", "bin"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "flink", d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "flink", "bin", "bash-java-utils.jar"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "job.jar"), nil, 0o644))
}

func TestFlinkTable(t *testing.T) {
	p := writeJob(t, `
"external-resources" = "gpu"
"external-resource.gpu.amount" = 1
[flink]
home = "flink"
jar = "job.jar"
main-class = "com.example.Job"
args = ["--n", "3"]
[flink.config]
"taskmanager.numberOfTaskSlots" = 2
"scheduler-mode" = "reactive"
"pipeline.object-reuse" = true
[taskexecutor]
instances = 2
memory = 1024
`)
	dir := filepath.Dir(p)
	fakeFlinkHome(t, dir)
	j, err := LoadJob(p)
	require.NoError(t, err)
	require.NotNil(t, j.Flink)
	assert.Equal(t, filepath.Join(dir, "flink"), j.Flink.Home)
	assert.Equal(t, filepath.Join(dir, "job.jar"), j.Flink.Jar)
	assert.Equal(t, "com.example.Job", j.Flink.MainClass)
	assert.Equal(t, []string{"--n", "3"}, j.Flink.Args)
	assert.Equal(t, map[string]string{"taskmanager.numberOfTaskSlots": "2", "scheduler-mode": "reactive", "pipeline.object-reuse": "true",
		"external-resources": "gpu", "external-resource.gpu.amount": "1"}, j.Flink.Config)
	assert.Equal(t, FlinkTaskManagerCommand, j.TaskExecutor.Command, "the TaskExecutors are TaskManagers")
	assert.Equal(t, contract.DeviceEnvOff, j.TaskExecutor.Env[contract.EnvDeviceEnv], "the launcher leaves CUDA_VISIBLE_DEVICES alone")
	assert.Equal(t, int64(FlinkMinAMMemoryMB), j.AM.MemoryMB, "the AM holds the JobManager")

	// In the container, the jar is the localised file of the same name.
	f, err := Read(p)
	require.NoError(t, err)
	sj, err := f.StagedJob()
	require.NoError(t, err)
	assert.Equal(t, "job.jar", sj.Flink.Jar)
}

func TestFlinkTableProblems(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"[flink]\njar = \"job.jar\"\n", "[flink] needs home"},
		{"[flink]\nhome = \"flink\"\nprovided = \"hdfs:///f.tar\"\n", "give one"},
		{"[flink]\nprovided = \"/opt/flink\"\n", `flink.provided = "/opt/flink": want the hdfs:// URI of an archive`},
		{"[flink]\nhome = \"nohome\"\n", "lib is missing"},
		{"[flink]\nhome = \"flink\"\njar = \"missing.jar\"\n", "not a readable file"},
		{"[flink]\nhome = \"flink\"\nmain-class = \"A\"\n", "need flink.jar"},
		{"[flink]\nhome = \"flink\"\nhomme = 1\n", `unknown key "flink.homme" (did you mean "flink.home"?)`},
		{"[flink]\nhome = \"flink\"\n[flink.config]\n\"jobmanager.rpc.address\" = \"x\"\n", `"jobmanager.rpc.address" is set by yarn-am`},
		{"[flink]\nhome = \"flink\"\n[flink.config]\n\"a\" = [1]\n", "flink.config.a = [1]: want a string, number or boolean"},
		{"[flink]\nhome = \"flink\"\n[taskexecutor]\ncommand = \"./w\"\n", "remove command"},
		{"[flink]\nhome = \"flink\"\n[am]\nmemory = 512\n", "am.memory = 512: a [flink] job's AM runs the JobManager too"},
	} {
		p := writeJob(t, tc.body)
		fakeFlinkHome(t, filepath.Dir(p))
		_, err := LoadJob(p)
		var je *JobError
		require.True(t, errors.As(err, &je), "%q: %v", tc.body, err)
		assert.Contains(t, err.Error(), tc.want, tc.body)
	}
}
