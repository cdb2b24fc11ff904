package client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/jobfile"
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
	assert.ElementsMatch(t, []string{"yarn-am-binary", "job.toml", "core-site.xml", "yarn-site.xml", "worker", "data.tgz", "driver.sh", "manifest.json"}, lines)
	m2, am2 := byAlias(st2.Manifest), byAlias(st2.AM)
	assert.Equal(t, m1["worker"], m2["worker"])
	assert.Equal(t, m1["data"], m2["data"])
	assert.Equal(t, am1["driver.sh"], am2["driver.sh"])
	copied2, reused2 := st2.UploadedBytes()
	assert.Equal(t, copied1, reused2, "the second staging copies nothing: yarn-am's own files are entries too")
	assert.Zero(t, copied2)
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
	assert.Equal(t, contract.VisibilityPrivate, byAlias(st.Manifest)["job.toml"].Visibility, "yarn-am's own files are PRIVATE entries of the cache whatever the table says")
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
	require.NoError(t, RemoveStaging(f.fs, "alice", f.request(nil).AppID), "the application ended")
	cache := CacheDir("alice")
	entries, err := f.fs.ReadDir(cache)
	require.NoError(t, err)
	require.Len(t, entries, 7, "the binary, the job's three files, the job file, two site files and the manifest")
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
	assert.Len(t, left, 7, "six used entries and the stray directory stay")

	// A reuse marks the entry used again: restaging after the clock was set back keeps it. (Not the
	// manifest's entry: the manifest names the entry that was removed, so restaging makes a new one.)
	var again string
	for _, e := range left {
		if cacheEntryName.MatchString(e.Name()) && !strings.HasSuffix(e.Name(), "-600") {
			again = e.Name()
			break
		}
	}
	require.NotEmpty(t, again)
	require.NoError(t, os.Chtimes(f.fs.p(path.Join(cache, again)), past, past))
	req := f.request(nil)
	req.AppID = "application_1700000000000_0010"
	_, err = Stage(context.Background(), f.fs, req)
	require.NoError(t, err)
	require.NoError(t, RemoveStaging(f.fs, "alice", req.AppID))
	removed, err = SweepCache(context.Background(), f.fs, "alice", time.Now(), &out)
	require.NoError(t, err)
	assert.Empty(t, removed, "every entry with a recent or renewed use was used by the last staging")
}

func TestSweepCacheWithoutACacheIsQuiet(t *testing.T) {
	var out bytes.Buffer
	removed, err := SweepCache(context.Background(), localFS{root: t.TempDir()}, "alice", time.Now(), &out)
	require.NoError(t, err)
	assert.Empty(t, removed)
	assert.Empty(t, out.String())
}

// Two submits of the same content at once: the entry is renamed into place once, under the claim, and
// never replaced; a submit that finds the claim taken waits for the entry and uses it. (colinmarc/hdfs's
// rename replaces its target, and a replaced entry's new modification time failed the localisation of
// the application that had named the first one: "changed on src filesystem".)
func TestCacheEntryIsPlacedOnceUnderTheClaim(t *testing.T) {
	fsys := localFS{root: t.TempDir()}
	dir := "/user/alice/.yarn-am/cache/k-755"
	require.NoError(t, fsys.MkdirAll(dir, 0o700))
	remote, claim := dir+"/worker", dir+"/worker.claim"
	put := func(name, body string) {
		w, err := fsys.Create(name, 0o600)
		require.NoError(t, err)
		_, _ = w.Write([]byte(body))
		require.NoError(t, w.Close())
	}
	clock := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }

	// Another submit holds the claim and puts its entry in place while this one waits.
	put(dir+"/.tmp-a", "12345")
	put(claim, "")
	require.NoError(t, os.Chtimes(fsys.p(claim), clock, clock))
	waits := 0
	got, reused, err := placeCacheEntry(fsys, dir+"/.tmp-a", remote, sumOf("12345"), 5, now, func(time.Duration) {
		waits++
		if waits == 3 {
			put(remote, "12345") // the other submit's rename
			require.NoError(t, fsys.RemoveAll(claim))
		}
	})
	require.NoError(t, err)
	assert.Equal(t, remote, got)
	assert.True(t, reused, "the other submit's entry is used")
	_, err = fsys.Stat(dir + "/.tmp-a")
	assert.True(t, os.IsNotExist(err), "this submit's copy is removed")
	before, err := fsys.Stat(remote)
	require.NoError(t, err)

	// A later submit with a free claim finds the entry and does not replace it.
	put(dir+"/.tmp-b", "12345")
	got, reused, err = placeCacheEntry(fsys, dir+"/.tmp-b", remote, sumOf("12345"), 5, now, func(time.Duration) { t.Fatal("no wait with a free claim") })
	require.NoError(t, err)
	assert.Equal(t, remote, got)
	assert.True(t, reused)
	after, err := fsys.Stat(remote)
	require.NoError(t, err)
	assert.Equal(t, before.ModTime(), after.ModTime(), "the entry is never rewritten")
	_, err = fsys.Stat(claim)
	assert.True(t, os.IsNotExist(err), "the claim is released")

	// A claim left by a submit that died (older than claimStale) is taken over.
	other := dir + "/model"
	put(other+".claim", "")
	old := clock.Add(-claimStale - time.Second)
	require.NoError(t, os.Chtimes(fsys.p(other+".claim"), old, old))
	put(dir+"/.tmp-c", "abc")
	got, reused, err = placeCacheEntry(fsys, dir+"/.tmp-c", other, sumOf("abc"), 3, now, func(time.Duration) {})
	require.NoError(t, err)
	assert.Equal(t, other, got)
	assert.False(t, reused, "this submit's copy became the entry")

	// A fresh claim that is never released: after claimWait the submit uses its own complete copy.
	third := dir + "/data"
	put(third+".claim", "")
	require.NoError(t, os.Chtimes(fsys.p(third+".claim"), clock, clock))
	put(dir+"/.tmp-d", "xy")
	got, reused, err = placeCacheEntry(fsys, dir+"/.tmp-d", third, sumOf("xy"), 2, func() time.Time { return clock }, func(d time.Duration) { clock = clock.Add(d) })
	require.NoError(t, err)
	assert.Equal(t, dir+"/.tmp-d", got, "its own copy, under its temporary name")
	assert.False(t, reused)
}

func sumOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// Whoever holds the user's HDFS token can rewrite a cache entry, keeping its size (and its
// modification time): the next submit reads it back, finds that it does not hash to its name, says so
// and replaces it, and the application runs the user's bytes, not the planted ones.
func TestTamperedCacheEntryIsReplaced(t *testing.T) {
	f := newCacheFixture(t, cacheJob)
	st1, err := Stage(context.Background(), f.fs, f.request(nil))
	require.NoError(t, err)
	entry := strings.TrimPrefix(byAlias(st1.Manifest)["worker"].URL, "hdfs://nn.example:8020")
	want, err := os.ReadFile(filepath.Join(f.dir, "worker"))
	require.NoError(t, err)
	fi, err := os.Stat(f.fs.p(entry))
	require.NoError(t, err)
	planted := bytes.Repeat([]byte("X"), len(want))
	require.NoError(t, os.WriteFile(f.fs.p(entry), planted, 0o755))
	require.NoError(t, os.Chtimes(f.fs.p(entry), fi.ModTime(), fi.ModTime()))

	req := f.request(nil)
	req.AppID = "application_1700000000000_0011"
	var replaced, reused []string
	req.Progress = func(u Upload) {
		if u.Replaced {
			replaced = append(replaced, path.Base(u.Remote))
		}
		if u.Reused {
			reused = append(reused, path.Base(u.Remote))
		}
	}
	st2, err := Stage(context.Background(), f.fs, req)
	require.NoError(t, err)
	assert.Equal(t, []string{"worker"}, replaced)
	assert.ElementsMatch(t, []string{"yarn-am-binary", "job.toml", "core-site.xml", "yarn-site.xml", "data.tgz", "driver.sh"}, reused, "untouched entries are still reused")
	got, err := os.ReadFile(f.fs.p(entry))
	require.NoError(t, err)
	assert.Equal(t, want, got, "the entry holds the user's bytes again")
	assert.Equal(t, byAlias(st1.Manifest)["worker"].URL, byAlias(st2.Manifest)["worker"].URL, "at the same name")

	// A submit that waits for another's claim does not take a planted entry for the finished one.
	require.NoError(t, os.WriteFile(f.fs.p(entry), planted, 0o755))
	tmp := path.Dir(entry) + "/.tmp-z"
	w, err := f.fs.Create(tmp, 0o755)
	require.NoError(t, err)
	_, _ = w.Write(want)
	require.NoError(t, w.Close())
	got2, reusedOther, err := placeCacheEntry(f.fs, tmp, entry, sumOf(string(want)), int64(len(want)), time.Now, func(time.Duration) {})
	require.NoError(t, err)
	assert.Equal(t, entry, got2)
	assert.False(t, reusedOther, "this submit's copy replaced the planted entry")
	got, err = os.ReadFile(f.fs.p(entry))
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

// An entry no submit has used for 30 days is kept while an application that used it still has its
// staging directory: a long-running application localises it again for every new container and AM
// attempt. Once that application's directory is gone, the entry goes.
func TestSweepCacheKeepsEntriesOfRunningApplications(t *testing.T) {
	f := newCacheFixture(t, cacheJob)
	app := f.request(nil).AppID
	_, err := Stage(context.Background(), f.fs, f.request(nil))
	require.NoError(t, err)
	cache := CacheDir("alice")
	entries, err := f.fs.ReadDir(cache)
	require.NoError(t, err)
	require.Len(t, entries, 7, "the binary, the job's three files, the job file, two site files and the manifest")
	past := time.Now().Add(-40 * 24 * time.Hour)
	for _, e := range entries {
		require.NoError(t, os.Chtimes(f.fs.p(path.Join(cache, e.Name())), past, past))
	}
	var out bytes.Buffer
	removed, err := SweepCache(context.Background(), f.fs, "alice", time.Now(), &out)
	require.NoError(t, err)
	assert.Empty(t, removed, "%s still runs and names every entry", app)
	assert.Empty(t, out.String())

	require.NoError(t, RemoveStaging(f.fs, "alice", app))
	removed, err = SweepCache(context.Background(), f.fs, "alice", time.Now(), &out)
	require.NoError(t, err)
	assert.Len(t, removed, 7, "its staging directory is gone: it ended")
}

// A second submit of the same job names exactly the entries of the first (URL, size, modification
// time), every one PRIVATE, for the AM and for the TaskExecutors: a NodeManager that localised the
// first application's containers has everything in its cache, and starts the second's containers
// without a localizer (docs/job-file.md#visibility-and-the-cache).
func TestStageSecondSubmitLocalisesNothingNew(t *testing.T) {
	f := newCacheFixture(t, cacheJob)
	st1, err := Stage(context.Background(), f.fs, f.request(nil))
	require.NoError(t, err)
	req := f.request(nil)
	req.AppID = "application_1700000000000_0008"
	st2, err := Stage(context.Background(), f.fs, req)
	require.NoError(t, err)
	for _, l := range []struct {
		name     string
		one, two []contract.LocalResource
	}{{"the AM's", st1.AM, st2.AM}, {"the TaskExecutors'", st1.Manifest, st2.Manifest}} {
		assert.Equal(t, l.one, l.two, "%s local resources", l.name)
		for _, r := range l.two {
			assert.Equal(t, contract.VisibilityPrivate, r.Visibility, "%s %s", l.name, r.Alias)
			assert.Contains(t, r.URL, "/user/alice/.yarn-am/cache/", "%s %s", l.name, r.Alias)
		}
	}
	assert.Contains(t, byAlias(st2.AM), contract.StagedManifest)
}
