package jobfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// [am] files, archives, env and visibility, and taskexecutor.visibility
// (docs/job-file.md#the-am-container, docs/job-file.md#visibility-and-the-cache).

const teOK = "[taskexecutor]\ncommand = \"./worker\"\n"

func TestAMFilesArchivesEnvAndVisibility(t *testing.T) {
	p := writeJob(t, teOK+`files = ["worker"]
visibility = "application"
[am]
files = ["worker", "driver.sh#run.sh", "hdfs://nn:8020/shared/conf.json"]
archives = ["env.tar.gz#py"]
visibility = "private"
[am.env]
MODEL = "m1"
YARN_AM_LOG_LEVEL = "debug"
`)
	dir := filepath.Dir(p)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "driver.sh"), []byte("#!/bin/sh\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "env.tar.gz"), []byte("x"), 0o644))
	j, err := LoadJob(p)
	require.NoError(t, err)
	assert.Equal(t, []FileSpec{
		{Source: filepath.Join(dir, "worker"), Alias: "worker"},
		{Source: filepath.Join(dir, "driver.sh"), Alias: "run.sh"},
		{Source: "hdfs://nn:8020/shared/conf.json", Alias: "conf.json"},
	}, j.AM.Files, "the AM's aliases are its own: worker is also a TaskExecutor file")
	assert.Equal(t, []FileSpec{{Source: filepath.Join(dir, "env.tar.gz"), Alias: "py"}}, j.AM.Archives)
	assert.Equal(t, map[string]string{"MODEL": "m1", "YARN_AM_LOG_LEVEL": "debug"}, j.AM.Env)
	assert.Equal(t, VisibilityPrivate, j.AM.Visibility)
	assert.Equal(t, VisibilityApplication, j.TaskExecutor.Visibility)

	// In the container the AM reads the staged job: local sources are not looked for.
	require.NoError(t, os.Remove(filepath.Join(dir, "driver.sh")))
	f, err := Read(p)
	require.NoError(t, err)
	sj, err := f.StagedJob()
	require.NoError(t, err)
	assert.Equal(t, "run.sh", sj.AM.Files[1].Alias)
}

func TestAMTableBadValues(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"missing file", "[am]\nfiles = [\"nope.sh\"]\n", []string{"am.files", `"nope.sh" does not exist`}},
		{"a directory", "[am]\nfiles = [\"sub\"]\n", []string{"am.files", "is a directory", "under am.archives"}},
		{"not an archive", "[am]\narchives = [\"worker\"]\n", []string{"am.archives", "not an archive", "under am.files"}},
		{"reserved alias", "[am]\nfiles = [\"worker#job.toml\"]\n", []string{"am.files", `"job.toml"`, "reserved"}},
		{"duplicate alias", "[am]\nfiles = [\"worker\", \"sub/worker\"]\n", []string{"am.files", "would both be localised as \"worker\""}},
		{"files a string", "[am]\nfiles = \"worker\"\n", []string{"am.files", "list of strings"}},
		{"env a number", "[am.env]\nA = 1\n", []string{"am.env.A", "want a string"}},
		{"env bad name", "[am.env]\n\"1A\" = \"x\"\n", []string{"am.env", `"1A"`, "not a valid environment variable name"}},
		{"env reserved by YARN", "[am.env]\nCONTAINER_ID = \"x\"\n", []string{"am.env", "CONTAINER_ID is reserved", "NodeManager"}},
		{"env reserved by yarn-am", "[am.env]\nHADOOP_CONF_DIR = \"/etc/hadoop\"\n", []string{"am.env", "HADOOP_CONF_DIR is reserved", "[am.env]"}},
		{"env YARN_AM_", "[am.env]\nYARN_AM_SECRET = \"x\"\n", []string{"am.env", "YARN_AM_SECRET is reserved"}},
		{"visibility unknown", "[am]\nvisibility = \"world\"\n", []string{`am.visibility = "world"`, `"private"`, `"application"`, `"public"`}},
		{"visibility a number", "[am]\nvisibility = 1\n", []string{"am.visibility", "string"}},
		{"public with a local file", "[am]\nfiles = [\"worker\"]\nvisibility = \"public\"\n", []string{`am.visibility = "public"`, "local file", `use "private"`}},
		{"unknown am key did you mean", "[am]\nfile = [\"worker\"]\n", []string{`"am.file"`, `did you mean "am.files"`}},
		{"te visibility unknown", teOK + "visibility = \"shared\"\n", []string{`taskexecutor.visibility = "shared"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.body
			if tc.name != "te visibility unknown" {
				body = teOK + tc.body
			}
			p := writeJob(t, body)
			require.NoError(t, os.MkdirAll(filepath.Join(filepath.Dir(p), "sub"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(p), "sub", "worker"), []byte("x"), 0o644))
			_, err := LoadJob(p)
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestPublicVisibilityAcceptsRemoteFiles(t *testing.T) {
	p := writeJob(t, teOK+"archives = [\"hdfs://nn:8020/shared/py.tgz\"]\nvisibility = \"public\"\n")
	j, err := LoadJob(p)
	require.NoError(t, err)
	assert.Equal(t, VisibilityPublic, j.TaskExecutor.Visibility)
}
