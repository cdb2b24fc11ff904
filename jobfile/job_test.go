package jobfile

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeJob(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "worker"), []byte("#!/bin/sh\n"), 0o755))
	p := filepath.Join(dir, "job.toml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

func TestLoadJobFull(t *testing.T) {
	p := writeJob(t, `
name = "gpu-demo"
queue = "gpus"
tags = ["demo", "gpu"]
priority = 3
max-attempts = 2
"external-resources" = "gpu"
"external-resource.gpu.amount" = 2

[am]
memory = "1g"
vcores = 2

[taskexecutor]
instances = 4
command = "./worker --sleep 1s"
memory = 768
vcores = 2
max-failures = 5
files = ["worker", "hdfs://nn:8020/data/model.bin#model"]
archives = ["hdfs://nn:8020/envs/py.tgz#py"]
[taskexecutor.env]
FOO = "bar"

[external-resource.gpu.param]
"discovery-script.args" = "--enable-coordination"
`)
	j, err := LoadJob(p)
	require.NoError(t, err)
	assert.Equal(t, "gpu-demo", j.Name)
	assert.Equal(t, "gpus", j.Queue)
	assert.Equal(t, []string{"demo", "gpu"}, j.Tags)
	assert.Equal(t, int32(3), j.Priority)
	assert.Equal(t, int32(2), j.MaxAttempts)
	assert.Equal(t, AMSpec{MemoryMB: 1024, VCores: 2, Env: map[string]string{}, Visibility: VisibilityPrivate}, j.AM)
	te := j.TaskExecutor
	assert.Equal(t, 4, te.Instances)
	assert.Equal(t, "./worker --sleep 1s", te.Command)
	assert.Equal(t, int64(768), te.MemoryMB)
	assert.Equal(t, int32(2), te.VCores)
	assert.Equal(t, 5, te.MaxFailures)
	require.Len(t, te.Files, 2)
	assert.Equal(t, FileSpec{Source: filepath.Join(filepath.Dir(p), "worker"), Alias: "worker"}, te.Files[0])
	assert.Equal(t, FileSpec{Source: "hdfs://nn:8020/data/model.bin", Alias: "model"}, te.Files[1])
	assert.True(t, te.Files[1].IsRemote())
	assert.Equal(t, []FileSpec{{Source: "hdfs://nn:8020/envs/py.tgz", Alias: "py"}}, te.Archives)
	assert.Equal(t, map[string]string{"FOO": "bar"}, te.Env)
}

func TestLoadJobDefaults(t *testing.T) {
	p := writeJob(t, "[taskexecutor]\ncommand = \"true\"\n")
	j, err := LoadJob(p)
	require.NoError(t, err)
	assert.Equal(t, "job", j.Name)
	assert.Equal(t, DefaultQueue, j.Queue)
	assert.Equal(t, AMSpec{MemoryMB: DefaultAMMemoryMB, VCores: DefaultAMVCores, Env: map[string]string{}, Visibility: VisibilityPrivate}, j.AM)
	assert.Equal(t, 1, j.TaskExecutor.Instances)
	assert.Equal(t, int64(DefaultTaskExecutorMemory), j.TaskExecutor.MemoryMB)
	assert.Equal(t, DefaultTaskExecutorRetries, j.TaskExecutor.MaxFailures)
}

func TestLoadJobCollectsAllProblems(t *testing.T) {
	p := writeJob(t, `
name = "bad name!"
prioroty = 1
[am]
memory = "lots"
vcores = 0
[taskexecutor]
instances = -1
memory = -5
files = ["missing.bin", "worker", "other/worker"]
[taskexecutor.env]
"1BAD" = "x"
`)
	_, err := LoadJob(p)
	require.Error(t, err)
	var je *JobError
	require.ErrorAs(t, err, &je)
	dir := filepath.Dir(p)
	assert.ElementsMatch(t, []string{
		`unknown key "prioroty" (did you mean "priority"?); valid top-level keys are name, queue, tags, priority, max-attempts, keep-containers, flink-conf, hdfs-namenodes, [am], [taskexecutor], [policy], and the external-resource keys`,
		`name = "bad name!": use 1-128 letters, digits, '.', '_' or '-'`,
		`am.memory: "lots" is not a memory size: write a number of MiB or a number with a unit k, m, g or t (examples: 512, 512m, 2g)`,
		`am.vcores = 0: want an integer from 1 to 1024`,
		`taskexecutor.instances = -1: want an integer from 0 to 100000`,
		`taskexecutor.command is missing: give the command each TaskExecutor runs, e.g. command = "./worker"`,
		`taskexecutor.memory = -5: want a positive number of MiB up to 1073741824, or a size like "2g"`,
		`taskexecutor.files: "missing.bin" does not exist (relative paths are resolved against the job file's directory ` + dir + `)`,
		`taskexecutor.files: "other/worker" does not exist (relative paths are resolved against the job file's directory ` + dir + `)`,
		`taskexecutor.env: "1BAD" is not a valid environment variable name (letters, digits and '_', not starting with a digit)`,
	}, je.Problems)
	assert.Contains(t, err.Error(), "has 10 problems")
}

func TestLoadJobDuplicateAlias(t *testing.T) {
	p := writeJob(t, "[taskexecutor]\ncommand = \"x\"\nfiles = [\"worker\", \"hdfs://nn/a/worker\"]\n")
	_, err := LoadJob(p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"worker" and "hdfs://nn/a/worker" would both be localised as "worker"; give one an alias with '#name'`)
}

func TestLoadJobMissingFileAndBadTOML(t *testing.T) {
	_, err := LoadJob(filepath.Join(t.TempDir(), "nope.toml"))
	assert.ErrorContains(t, err, "does not exist")
	p := writeJob(t, "name = \n")
	_, err = LoadJob(p)
	assert.ErrorContains(t, err, "is not valid TOML")
}

func TestParseMemoryMB(t *testing.T) {
	for in, want := range map[string]int64{"512": 512, "512m": 512, "2g": 2048, "2GiB": 2048, "1.5g": 1536, "1t": 1 << 20, "2048k": 2, "100MB": 100} {
		got, err := ParseMemoryMB(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "abc", "-1", "0", "1k", "NaN", "inf", "-Inf", "1e30g", "1.5m", "0x10", "2048t"} {
		_, err := ParseMemoryMB(in)
		assert.Error(t, err, in)
	}
}

func TestLoadJobLeavesPolicyToTheAM(t *testing.T) {
	p := writeJob(t, "[taskexecutor]\ncommand = \"x\"\n[policy]\npending-timeout = \"30s\"\n")
	_, err := LoadJob(p)
	require.NoError(t, err, "the [policy] table is read by Policy, not rejected as unknown")
}

func TestLoadJobFlinkConfIsResolvedAgainstTheJobFile(t *testing.T) {
	p := writeJob(t, "flink-conf = \"conf/flink-conf.yaml\"\n[taskexecutor]\ncommand = \"x\"\n")
	j, err := LoadJob(p)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(filepath.Dir(p), "conf", "flink-conf.yaml"), j.ResourceConf)

	p = writeJob(t, "flink-conf = \"/etc/flink/flink-conf.yaml\"\n[taskexecutor]\ncommand = \"x\"\n")
	j, err = LoadJob(p)
	require.NoError(t, err)
	assert.Equal(t, "/etc/flink/flink-conf.yaml", j.ResourceConf)

	j, err = LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"x\"\n"))
	require.NoError(t, err)
	assert.Empty(t, j.ResourceConf)
}

func TestLoadJobGangKeys(t *testing.T) {
	j, err := LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\ninstances = 4\ngang = true\ngang-timeout = \"90s\"\n"))
	require.NoError(t, err)
	assert.True(t, j.TaskExecutor.Gang)
	assert.Equal(t, 90*time.Second, j.TaskExecutor.GangTimeout)

	j, err = LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\ngang = true\n"))
	require.NoError(t, err)
	assert.Equal(t, DefaultGangTimeout, j.TaskExecutor.GangTimeout)

	for body, want := range map[string]string{
		"gang = true\ngang-timeout = \"5\"\n":   `taskexecutor.gang-timeout = "5": not a duration; use a number with a unit`,
		"gang = true\ngang-timeout = \"-1m\"\n": `taskexecutor.gang-timeout = "-1m": must be positive`,
		"gang-timeout = \"1m\"\n":               "is set but taskexecutor.gang is not true",
	} {
		_, err := LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\n"+body))
		assert.ErrorContains(t, err, want)
	}
}

func TestLoadJobLocality(t *testing.T) {
	j, err := LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\n"))
	require.NoError(t, err)
	assert.Equal(t, "any", j.TaskExecutor.Locality)

	j, err = LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\nlocality = \"spread\"\n"))
	require.NoError(t, err)
	assert.Equal(t, "spread", j.TaskExecutor.Locality)

	_, err = LoadJob(writeJob(t, "[taskexecutor]\ncommand = \"./worker\"\nlocality = \"nearby\"\n"))
	assert.ErrorContains(t, err, `taskexecutor.locality = "nearby": use "any"`)
	assert.ErrorContains(t, err, `or "spread"`)
}
