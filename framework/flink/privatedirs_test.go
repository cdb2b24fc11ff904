package flink

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
)

// A Flink process's temporary and working directories go into its container's own: io.tmp.dirs to
// YARN's LOCAL_DIRS, the role's working directory to the first of them, java.io.tmpdir to the
// container's tmp/ (0700, made here), never the node's /tmp; the job's own keys stay as they are; a
// process without LOCAL_DIRS is not in a container and does not start.
func TestPrivateDirsAreTheContainers(t *testing.T) {
	dir := t.TempDir()
	local := t.TempDir() + "/a," + t.TempDir() + "/b"
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "LOCAL_DIRS" {
				return v
			}
			return ""
		}
	}
	for _, role := range []flinkdist.Role{flinkdist.RoleTaskManager, flinkdist.RoleApplication, flinkdist.RoleSession} {
		conf := flinkdist.NewConfig()
		conf.Set(flinkdist.KeyJavaDefaultOpts, "-XX:+UseG1GC")
		said, err := privateDirs(conf, role, dir, env(local))
		require.NoError(t, err, role)
		v, _ := conf.Get(keyTmpDirs)
		assert.Equal(t, local, v, "%s: io.tmp.dirs is LOCAL_DIRS", role)
		roleKey, other := keyJMWorkingDir, keyTMWorkingDir
		if role == flinkdist.RoleTaskManager {
			roleKey, other = keyTMWorkingDir, keyJMWorkingDir
		}
		wd, _ := conf.Get(roleKey)
		firstDir, _, _ := strings.Cut(local, ",")
		assert.Equal(t, firstDir, wd, "%s: the working directory is the first of LOCAL_DIRS", role)
		_, set := conf.Get(other)
		assert.False(t, set, "%s: the other role's key is left alone", role)
		opts, _ := conf.Get(flinkdist.KeyJavaDefaultOpts)
		assert.Equal(t, "-Djava.io.tmpdir="+filepath.Join(dir, "tmp")+" -XX:+UseG1GC", opts)
		assert.Contains(t, said, "io.tmp.dirs="+local)
		assert.Contains(t, said, "java.io.tmpdir="+filepath.Join(dir, "tmp"))
		st, err := os.Stat(filepath.Join(dir, "tmp"))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o700), st.Mode().Perm())
	}

	// The job's own directories are kept.
	conf := flinkdist.NewConfig()
	conf.Set(keyTmpDirs, "/data/flink-tmp")
	conf.Set(keyWorkingDir, "/data/flink-work")
	conf.Set(flinkdist.KeyJavaOptsAll, "-Djava.io.tmpdir=/data/jtmp")
	said, err := privateDirs(conf, flinkdist.RoleTaskManager, dir, env(local))
	require.NoError(t, err)
	v, _ := conf.Get(keyTmpDirs)
	assert.Equal(t, "/data/flink-tmp", v)
	_, set := conf.Get(keyTMWorkingDir)
	assert.False(t, set, "process.working-dir of the job's own covers both roles")
	_, set = conf.Get(flinkdist.KeyJavaDefaultOpts)
	assert.False(t, set)
	assert.Contains(t, said, "the job's own")
	// A java.io.tmpdir for the TaskManagers alone leaves the JobManager's to yarn-am.
	conf = flinkdist.NewConfig()
	conf.Set(flinkdist.KeyJavaOptsTM, "-Djava.io.tmpdir=/data/jtmp")
	_, err = privateDirs(conf, flinkdist.RoleSession, dir, env(local))
	require.NoError(t, err)
	opts, _ := conf.Get(flinkdist.KeyJavaDefaultOpts)
	assert.Equal(t, "-Djava.io.tmpdir="+filepath.Join(dir, "tmp"), opts)

	_, err = privateDirs(flinkdist.NewConfig(), flinkdist.RoleTaskManager, dir, env(""))
	assert.ErrorContains(t, err, "LOCAL_DIRS is not set")
	_, err = privateDirs(flinkdist.NewConfig(), flinkdist.RoleTaskManager, dir, env("local/dir"))
	assert.ErrorContains(t, err, `LOCAL_DIRS holds "local/dir", not an absolute path`)
}
