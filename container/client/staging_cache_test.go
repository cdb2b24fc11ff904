package client

import (
	"bytes"
	"context"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/container/contract"
	"github.com/yarn-am/yarn-am/container/jobfile"
)

// The per-user cache and the visibility of staged files (docs/job-file.md#visibility-and-the-cache).

const cacheJob = `
name = "cache-test"
[taskexecutor]
command = "./worker"
files = ["worker"]
archives = ["data.tgz#data"]
[am]
files = ["driver.sh"]
[am.env]
MODEL = "m1"
`

func newCacheFixture(t *testing.T, body string) *stageFixture {
	t.Helper()
	return newStageFixtureWith(t, body, map[string]string{"driver.sh": "#!/bin/bash\necho driver\n"})
}

// newStageFixtureWith is newStageFixture with more files (mode 0755) in the job's directory, written
// before the job is loaded (am.files must exist).
func newStageFixtureWith(t *testing.T, body string, files map[string]string) *stageFixture {
	t.Helper()
	f := newStageFixture(t, "[taskexecutor]\ncommand = \"./w\"\n")
	for n, c := range files {
		require.NoError(t, os.WriteFile(filepath.Join(f.dir, n), []byte(c), 0o755))
	}
	p := filepath.Join(f.dir, "job.toml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	job, err := jobfile.LoadJob(p)
	require.NoError(t, err)
	f.job = job
	return f
}

func TestStageUploadsOnceThenReusesTheCache(t *testing.T) {
	f := newCacheFixture(t, cacheJob)
	st1, err := Stage(context.Background(), f.fs, f.request(nil))
	require.NoError(t, err)
	m1, am1 := byAlias(st1.Manifest), byAlias(st1.AM)
	for _, r := range []contract.LocalResource{m1["worker"], m1["data"], am1["driver.sh"]} {
		assert.Contains(t, r.URL, "hdfs://nn.example:8020/user/alice/.yarn-am/cache/", r.Alias)
		assert.Equal(t, contract.VisibilityPrivate, r.Visibility, r.Alias)
	}
	assert.Equal(t, contract.TypeArchive, m1["data"].Type)
	assert.NotContains(t, m1, "driver.sh", "am.files go to the AM only")
	assert.Contains(t, am1["driver.sh"].URL, "-755/driver.sh", "the key names the mode: the script stays executable")
	copied1, reused1 := st1.UploadedBytes()
	assert.Zero(t, reused1)

	// Another application, the same files: nothing of the user's is copied again, and the entries
	// (URL, size, modification time) are exactly the first ones, which the NodeManagers have cached.
	req := f.request(nil)
	req.AppID = "application_1700000000000_0008"
	var lines []string
	req.Progress = func(u Upload) {
		if u.Reused {
			lines = append(lines, path.Base(u.Remote))
		}
	}
	st2, err := Stage(context.Background(), f.fs, req)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"worker", "data.tgz", "driver.sh"}, lines)
	m2, am2 := byAlias(st2.Manifest), byAlias(st2.AM)
	assert.Equal(t, m1["worker"], m2["worker"])
	assert.Equal(t, m1["data"], m2["data"])
	assert.Equal(t, am1["driver.sh"], am2["driver.sh"])
	copied2, reused2 := st2.UploadedBytes()
	assert.Equal(t, copied1-reused2, copied2, "the second staging copies only yarn-am's own files")
	assert.Positive(t, reused2)
	for _, u := range st2.Uploaded {
		assert.False(t, strings.HasPrefix(u.Remote, CacheDir("alice")) && !u.Reused, "nothing is written to the cache: %s", u.Remote)
	}

	// Changed content is a new entry; the old one stays for applications that still use it.
	require.NoError(t, os.WriteFile(filepath.Join(f.dir, "worker"), []byte("#!/bin/sh\necho v2\n"), 0o755))
	req.AppID = "application_1700000000000_0009"
	st3, err := Stage(context.Background(), f.fs, req)
	require.NoError(t, err)
	assert.NotEqual(t, m1["worker"].URL, byAlias(st3.Manifest)["worker"].URL)
	_, err = f.fs.Stat(strings.TrimPrefix(m1["worker"].URL, "hdfs://nn.example:8020"))
	assert.NoError(t, err)
}

func TestStageAppliesTheTablesVisibility(t *testing.T) {
	g := newCacheFixture(t, strings.Replace(cacheJob, "command = \"./worker\"\n", "command = \"./worker\"\nvisibility = \"application\"\n", 1))
	st, err := Stage(context.Background(), g.fs, g.request(nil))
	require.NoError(t, err)
	assert.Equal(t, contract.VisibilityApplication, byAlias(st.Manifest)["worker"].Visibility)
	assert.Equal(t, contract.VisibilityApplication, byAlias(st.Manifest)["job.toml"].Visibility, "yarn-am's own files stay APPLICATION")
	assert.Equal(t, contract.VisibilityPrivate, byAlias(st.AM)["driver.sh"].Visibility)
}

func TestStageRefusesPublicWhenTheNodeManagerWould(t *testing.T) {
	body := "[taskexecutor]\ncommand = \"./w\"\narchives = [\"hdfs://nn.example:8020/shared/envs/py.tgz#py\"]\nvisibility = \"public\"\n"
	for _, tc := range []struct {
		name          string
		dirMode, mode os.FileMode
		want          string
	}{
		{"world-readable", 0o755, 0o644, ""},
		{"file not readable by all", 0o755, 0o640, "not readable by all users"},
		{"directory not searchable", 0o750, 0o644, "the directory /shared/envs above"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newStageFixture(t, body)
			require.NoError(t, os.MkdirAll(f.fs.p("/shared/envs"), 0o755))
			require.NoError(t, os.WriteFile(f.fs.p("/shared/envs/py.tgz"), []byte("x"), tc.mode))
			require.NoError(t, os.Chmod(f.fs.p("/shared/envs/py.tgz"), tc.mode))
			require.NoError(t, os.Chmod(f.fs.p("/shared/envs"), tc.dirMode))
			require.NoError(t, os.Chmod(f.fs.root, 0o755))
			st, err := Stage(context.Background(), f.fs, f.request(nil))
			if tc.want == "" {
				require.NoError(t, err)
				assert.Equal(t, contract.VisibilityPublic, byAlias(st.Manifest)["py"].Visibility)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), "taskexecutor.archives")
			assert.Contains(t, err.Error(), `visibility = "public"`)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestSweepCacheRemovesOnlyLongUnusedEntries(t *testing.T) {
	f := newCacheFixture(t, cacheJob)
	_, err := Stage(context.Background(), f.fs, f.request(nil))
	require.NoError(t, err)
	cache := CacheDir("alice")
	entries, err := f.fs.ReadDir(cache)
	require.NoError(t, err)
	require.Len(t, entries, 3)
	// One entry last used 31 days ago; a stray directory of another name as old.
	old := entries[0].Name()
	past := time.Now().Add(-31 * 24 * time.Hour)
	require.NoError(t, os.Chtimes(f.fs.p(path.Join(cache, old)), past, past))
	require.NoError(t, os.MkdirAll(f.fs.p(path.Join(cache, "not-an-entry")), 0o700))
	require.NoError(t, os.Chtimes(f.fs.p(path.Join(cache, "not-an-entry")), past, past))

	var out bytes.Buffer
	removed, err := SweepCache(context.Background(), f.fs, "alice", time.Now(), &out)
	require.NoError(t, err)
	assert.Equal(t, []string{path.Join(cache, old)}, removed)
	assert.Contains(t, out.String(), "removed the cache entry "+path.Join(cache, old)+" (unused for 31 days)")
	left, err := f.fs.ReadDir(cache)
	require.NoError(t, err)
	assert.Len(t, left, 3, "two used entries and the stray directory stay")

	// A reuse marks the entry used again: restaging after the clock was set back keeps it.
	require.NoError(t, os.Chtimes(f.fs.p(path.Join(cache, left[0].Name())), past, past))
	req := f.request(nil)
	req.AppID = "application_1700000000000_0010"
	_, err = Stage(context.Background(), f.fs, req)
	require.NoError(t, err)
	removed, err = SweepCache(context.Background(), f.fs, "alice", time.Now(), &out)
	require.NoError(t, err)
	assert.Empty(t, removed, "every entry was used by the last staging")
}

func TestSweepCacheWithoutACacheIsQuiet(t *testing.T) {
	var out bytes.Buffer
	removed, err := SweepCache(context.Background(), localFS{root: t.TempDir()}, "alice", time.Now(), &out)
	require.NoError(t, err)
	assert.Empty(t, removed)
	assert.Empty(t, out.String())
}
