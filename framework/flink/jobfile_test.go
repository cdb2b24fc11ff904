package flink

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/jobfile"
)

// writeJob writes a job file (and an executable ./worker beside it) into a new directory.
func writeJob(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "worker"), []byte("#!/bin/sh\n"), 0o755))
	p := filepath.Join(dir, "job.toml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

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
	j, err := jobfile.LoadJob(p)
	require.NoError(t, err)
	require.NotNil(t, specOf(j))
	assert.Equal(t, filepath.Join(dir, "flink"), specOf(j).Home)
	assert.Equal(t, filepath.Join(dir, "job.jar"), specOf(j).Jar)
	assert.Equal(t, "com.example.Job", specOf(j).MainClass)
	assert.Equal(t, []string{"--n", "3"}, specOf(j).Args)
	assert.Equal(t, map[string]string{"taskmanager.numberOfTaskSlots": "2", "scheduler-mode": "reactive", "pipeline.object-reuse": "true",
		"external-resources": "gpu", "external-resource.gpu.amount": "1"}, specOf(j).Config)
	assert.Equal(t, taskManagerCommand, j.TaskExecutor.Command, "the TaskExecutors are TaskManagers")
	assert.Equal(t, contract.DeviceEnvOff, j.TaskExecutor.Env[contract.EnvDeviceEnv], "the launcher leaves CUDA_VISIBLE_DEVICES alone")
	assert.Equal(t, int64(minAMMemoryMB), j.AM.MemoryMB, "the AM holds the JobManager")
	assert.Equal(t, waitSameHost, specOf(j).WaitForJobManager, "the default")
	assert.Equal(t, preemptCheckpoint, specOf(j).OnPreemption, "the default")
	assert.True(t, specOf(j).ClassDataSharing, "class-data sharing is on by default")
	assert.True(t, specOf(j).JITLateC2, "the late C2 is on by default")
	assert.Equal(t, flinkdist.LateC2Flags, jitFlags(specOf(j)))
	assert.Equal(t, defaultJobManagerRestarts, specOf(j).JobManagerRestarts, "a lost JobManager is restarted by default")
	assert.Equal(t, time.Hour, specOf(j).JobManagerRestartWindow)

	// In the container, the jar is the localised file of the same name.
	f, err := jobfile.Read(p)
	require.NoError(t, err)
	sj, err := f.StagedJob()
	require.NoError(t, err)
	assert.Equal(t, "job.jar", specOf(sj).Jar)
	assert.True(t, specOf(sj).ClassDataSharing, "the containers read the same default")

	off := writeJob(t, "[flink]\nprovided = \"hdfs:///f.tar\"\nclass-data-sharing = false\n[taskexecutor]\ninstances = 1\n")
	j, err = jobfile.LoadJob(off)
	require.NoError(t, err)
	assert.False(t, specOf(j).ClassDataSharing)

	jit := writeJob(t, "[flink]\nprovided = \"hdfs:///f.tar\"\njit-late-c2 = false\n[taskexecutor]\ninstances = 1\n")
	j, err = jobfile.LoadJob(jit)
	require.NoError(t, err)
	assert.False(t, specOf(j).JITLateC2)
	assert.Empty(t, jitFlags(specOf(j)), "jit-late-c2 = false: the JVM's own thresholds")

	restarts := writeJob(t, "[flink]\nprovided = \"hdfs:///f.tar\"\njar = \"job.jar\"\njobmanager-restarts = 0\njobmanager-restart-window = \"30m\"\n[taskexecutor]\ninstances = 1\n")
	require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(restarts), "job.jar"), nil, 0o644))
	j, err = jobfile.LoadJob(restarts)
	require.NoError(t, err)
	assert.Equal(t, 0, specOf(j).JobManagerRestarts)
	assert.Equal(t, 30*time.Minute, specOf(j).JobManagerRestartWindow)
	assert.Equal(t, defaultTokenRefresh, specOf(j).TokenRefresh)

	tokens := writeJob(t, "[flink]\nprovided = \"hdfs:///f.tar\"\ntoken-refresh = \"5s\"\n[taskexecutor]\ninstances = 1\n")
	j, err = jobfile.LoadJob(tokens)
	require.NoError(t, err)
	assert.Equal(t, 5*time.Second, specOf(j).TokenRefresh)
}

func TestFlinkTableProblems(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"[flink]\njar = \"job.jar\"\n", "[flink] needs home"},
		{"[flink]\nhome = \"flink\"\nprovided = \"hdfs:///f.tar\"\n", "give one"},
		{"[flink]\nprovided = \"/opt/flink\"\n", `flink.provided = "/opt/flink": want the hdfs:// URI of an archive`},
		{"[flink]\nhome = \"nohome\"\n", "nohome\": no such directory; make flink-dist installs Flink 2.3.0 in ~/.cache/yarn-am/flink-2.3.0 and 1.20.5 in ~/.cache/yarn-am/flink-1.20.5"},
		{"[flink]\nhome = \".\"\n", "lib is missing"},
		{"[flink]\nhome = \"flink\"\njar = \"missing.jar\"\n", "not a readable file"},
		{"[flink]\nhome = \"flink\"\nmain-class = \"A\"\n", "need flink.jar"},
		{"[flink]\nhome = \"flink\"\nwait-for-jobmanager = \"yes\"\n", `flink.wait-for-jobmanager = "yes": want one of same-host, always, never`},
		{"[flink]\nhome = \"flink\"\nwait-for-jobmanager = true\n", `flink.wait-for-jobmanager = true: want a string`},
		{"[flink]\nhome = \"flink\"\ntaskmanagers = \"auto\"\n", `flink.taskmanagers = "auto": want "fixed" (the default`},
		{"[flink]\nhome = \"flink\"\n[taskexecutor]\ninstances = 3\nmin-instances = 2\n", `taskexecutor.min-instances = 2 is set but flink.taskmanagers is not "demand"`},
		{"[flink]\nhome = \"flink\"\ntaskmanagers = \"demand\"\n[taskexecutor]\ninstances = 3\nmin-instances = 4\n", `taskexecutor.min-instances = 4: want an integer from 1 to taskexecutor.instances = 3 (the fewest TaskManagers`},
		{"[flink]\nhome = \"flink\"\ntaskmanagers = \"demand\"\n[flink.config]\n\"resourcemanager.taskmanager-timeout\" = \"a while\"\n", `resourcemanager.taskmanager-timeout = "a while": not a number with a unit`},
		{"[flink]\nhome = \"flink\"\n[flink.config]\n\"taskmanager.resource-id\" = \"tm1\"\n", `"taskmanager.resource-id" is set by yarn-am (the TaskManager's YARN container id`},
		{"[flink]\nhome = \"flink\"\ncheckpoint-on-preemption = \"yes\"\n", `flink.checkpoint-on-preemption = "yes": want one of checkpoint, savepoint, off`},
		{"[flink]\nhome = \"flink\"\njar = \"job.jar\"\nweb-submit = true\n", "flink.web-submit = true: an application cluster (flink.jar) runs its own job and takes no other"},
		{"[flink]\nhome = \"flink\"\nweb-submit = \"yes\"\n", `flink.web-submit = "yes": want true or false`},
		{"[flink]\nhome = \"flink\"\n[flink.config]\n\"web.submit.enable\" = true\n", `"web.submit.enable" is set by yarn-am (from [flink] web-submit`},
		{"[flink]\nhome = \"flink\"\nclass-data-sharing = \"off\"\n", `flink.class-data-sharing = "off": want true or false`},
		{"[flink]\nhome = \"flink\"\ninternal-tls = \"no\"\n", `flink.internal-tls = "no": want true or false`},
		{"[flink]\nhome = \"flink\"\njit-late-c2 = \"on\"\n", `flink.jit-late-c2 = "on": want true or false`},
		{"[flink]\nhome = \"flink\"\nhomme = 1\n", `unknown key "flink.homme" (did you mean "flink.home"?)`},
		{"[flink]\nhome = \"flink\"\n[flink.config]\n\"jobmanager.rpc.address\" = \"x\"\n", `"jobmanager.rpc.address" is set by yarn-am`},
		{"[flink]\nhome = \"flink\"\n[flink.config]\n\"taskmanager.memory.process.size\" = \"4g\"\n", `"taskmanager.memory.process.size" is set by yarn-am ([taskexecutor] memory, the TaskManager's container; set that instead)`},
		{"[flink]\nhome = \"flink\"\n[flink.config]\n\"a\" = [1]\n", "flink.config.a = [1]: want a string, number or boolean"},
		{"[flink]\nhome = \"flink\"\n[taskexecutor]\ncommand = \"./w\"\n", "remove command"},
		{"[flink]\nhome = \"flink\"\n[am]\nmemory = 512\n", "am.memory = 512: a [flink] job's AM runs the JobManager too"},
		{"[flink]\nhome = \"flink\"\nhadoop-classpath = 5\n", `flink.hadoop-classpath = 5: want a list of absolute paths, globs or $VAR/... entries`},
		{"[flink]\nhome = \"flink\"\nhadoop-classpath = [\"lib/*\"]\n", `flink.hadoop-classpath: entry "lib/*" is relative: the containers' working directories differ`},
		{"[flink]\nhome = \"flink\"\nhadoop-classpath = [\"/a:/b\"]\n", `flink.hadoop-classpath: entry "/a:/b" holds ":", the classpath separator`},
		{"[flink]\nhome = \"flink\"\nhadoop-classpath = [\"/a\", 1]\n", `flink.hadoop-classpath: 1 is an integer; want a list of strings`},
		{"[flink]\nhome = \"flink\"\njar = \"job.jar\"\njobmanager-restarts = -1\n", `flink.jobmanager-restarts = -1: want an integer from 0 to 100 (restarts of a lost JobManager`},
		{"[flink]\nhome = \"flink\"\njar = \"job.jar\"\njobmanager-restarts = \"3\"\n", `flink.jobmanager-restarts = "3": want an integer from 0 to 100, not a string`},
		{"[flink]\nhome = \"flink\"\njobmanager-restarts = 2\n", `flink.jobmanager-restarts = 2: a session cluster (no flink.jar) keeps no job to restore`},
		{"[flink]\nhome = \"flink\"\njar = \"job.jar\"\njobmanager-restart-window = \"an hour\"\n", `flink.jobmanager-restart-window = "an hour": not a duration; use a number with a unit, e.g. "1h" (the default) or "30m"`},
		{"[flink]\nhome = \"flink\"\njar = \"job.jar\"\njobmanager-restart-window = \"5s\"\n", `flink.jobmanager-restart-window = "5s": must be at least 1m0s`},
		{"[flink]\nhome = \"flink\"\ntoken-refresh = \"0.5s\"\n", `flink.token-refresh = "0.5s": must be at least 1s`},
		{"[flink]\nhome = \"flink\"\ntoken-refresh = \"2h\"\n", `flink.token-refresh = "2h0m0s": at most 1h0m0s (the AM replaces tokens at 3/4 of their maximum lifetime`},
		{"[flink]\nhome = \"flink\"\ntoken-refresh = \"often\"\n", `flink.token-refresh = "often": not a duration; use a number with a unit, e.g. "30s" (the default) or "10s"`},
	} {
		p := writeJob(t, tc.body)
		fakeFlinkHome(t, filepath.Dir(p))
		_, err := jobfile.LoadJob(p)
		var je *jobfile.JobError
		require.True(t, errors.As(err, &je), "%q: %v", tc.body, err)
		assert.Contains(t, err.Error(), tc.want, tc.body)
	}
}

// -D sets Flink keys of a [flink] job over [flink.config] (docs/flink.md#configuration): bare or as
// flink.config.<key>; job keys, their typos and keys yarn-am sets are not Flink's.
func TestFlinkDefines(t *testing.T) {
	p := writeJob(t, `
"external-resources" = "gpu"
"external-resource.gpu.amount" = 1
[flink]
home = "flink"
[flink.config]
"taskmanager.numberOfTaskSlots" = 1
"parallelism.default" = 1
`)
	fakeFlinkHome(t, filepath.Dir(p))
	f, err := jobfile.Read(p)
	require.NoError(t, err)
	res, err := f.ApplyDefines([]string{"taskmanager.numberOfTaskSlots=2", "flink.config.parallelism.default = 4",
		"taskexecutor.instances=3", "external-resource.gpu.amount=2", "state.backend.type=hashmap", "taskmanager.numberOfTaskSlots=3"})
	require.NoError(t, err)
	assert.Equal(t, []string{"external-resource.gpu.amount=2"}, res, "the launcher gets the resource keys")
	j, err := f.Job()
	require.NoError(t, err)
	assert.Equal(t, 3, j.TaskExecutor.Instances, "a job key stays a job key")
	assert.Equal(t, "3", specOf(j).Config["taskmanager.numberOfTaskSlots"], "the last -D wins over the file")
	assert.Equal(t, "4", specOf(j).Config["parallelism.default"])
	assert.Equal(t, "hashmap", specOf(j).Config["state.backend.type"])
	assert.Equal(t, []string{"taskmanager.numberOfTaskSlots=2", "parallelism.default=4", "external-resource.gpu.amount=2",
		"state.backend.type=hashmap", "taskmanager.numberOfTaskSlots=3"}, specOf(j).Defines, "in order, for the containers")
	sj, err := f.StagedJob()
	require.NoError(t, err)
	assert.Equal(t, specOf(j).Defines, specOf(sj).Defines, "the AM reads them from its own -D")

	for _, tc := range []struct{ define, want string }{
		{"taskexecutor.instance=3", `-D taskexecutor.instance: not a job key`},
		{"flink.jar=x.jar", `-D flink.jar: not a job key`},
		{"rest.address=h", `-D rest.address=h: "rest.address" is set by yarn-am`},
		{"taskmanager.numberOfTaskSlots", `want a Flink key and its value`},
		{"flink.config.=2", `want a Flink key and its value`},
	} {
		f, err := jobfile.Read(p)
		require.NoError(t, err)
		_, err = f.ApplyDefines([]string{tc.define})
		if err == nil {
			_, err = f.Job()
		}
		require.Error(t, err, tc.define)
		assert.Contains(t, err.Error(), tc.want, tc.define)
	}

	// Without [flink], a bare unknown key is an error as before, and flink.config.<key> says why.
	plain := writeJob(t, "[taskexecutor]\ncommand = \"true\"\n")
	for define, want := range map[string]string{
		"taskmanager.numberOfTaskSlots=2":              "not a job key or an external-resource key",
		"flink.config.taskmanager.numberOfTaskSlots=2": "the job has no [flink] table",
	} {
		f, err := jobfile.Read(plain)
		require.NoError(t, err)
		_, err = f.ApplyDefines([]string{define})
		require.Error(t, err)
		assert.Contains(t, err.Error(), want)
	}
}

// TestApplyDefinesRefusesANearMissOfAJobKey: in a [flink] job a misspelt job key given with -D
// (taskexecuter.instances, queu) is refused with a did-you-mean and the explicit form that gives it to
// Flink anyway, instead of becoming a Flink key while the job's value stays as it was.
func TestApplyDefinesRefusesANearMissOfAJobKey(t *testing.T) {
	p := writeJob(t, "[flink]\nhome = \"flink\"\n")
	fakeFlinkHome(t, filepath.Dir(p))
	for define, want := range map[string]string{
		"taskexecuter.instances=3": `did you mean "taskexecutor.instances"`,
		"queu=etl":                 `did you mean "queue"`,
		"prioriti=3":               `did you mean "priority"`,
	} {
		f, err := jobfile.Read(p)
		require.NoError(t, err)
		_, err = f.ApplyDefines([]string{define})
		require.Error(t, err, define)
		assert.Contains(t, err.Error(), want, define)
		assert.Contains(t, err.Error(), "-D flink.config.", define)
	}
	// The explicit form is the way to force it; a real Flink key still goes to Flink.
	for _, define := range []string{"flink.config.queu=etl", "taskmanager.numberOfTaskSlots=2"} {
		f, err := jobfile.Read(p)
		require.NoError(t, err)
		_, err = f.ApplyDefines([]string{define})
		require.NoError(t, err, define)
		j, err := f.Job()
		require.NoError(t, err, define)
		assert.Len(t, specOf(j).Defines, 1, define)
	}
}

// taskmanagers = "demand" takes taskexecutor.min-instances as its lower bound, without a gang.
func TestFlinkDemandTable(t *testing.T) {
	p := writeJob(t, "[flink]\nhome = \"flink\"\ntaskmanagers = \"demand\"\n[taskexecutor]\ninstances = 4\nmin-instances = 2\n")
	fakeFlinkHome(t, filepath.Dir(p))
	j, err := jobfile.LoadJob(p)
	require.NoError(t, err)
	assert.Equal(t, taskManagersDemand, specOf(j).TaskManagersMode)
	assert.True(t, j.TaskExecutor.MinInstancesSet)
	assert.Equal(t, 2, j.TaskExecutor.MinInstances)
	assert.False(t, j.TaskExecutor.Gang)

	p = writeJob(t, "[flink]\nhome = \"flink\"\n")
	fakeFlinkHome(t, filepath.Dir(p))
	j, err = jobfile.LoadJob(p)
	require.NoError(t, err)
	assert.Equal(t, taskManagersFixed, specOf(j).TaskManagersMode, "the default")
}
