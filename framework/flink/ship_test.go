package flink

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/jobfile"
)

func TestHomeArchiveIsPackedOncePerContent(t *testing.T) {
	home := t.TempDir()
	for p, body := range map[string]string{
		"lib/flink-dist-1.20.5.jar": "dist", "plugins/external-resource-gpu/gpu.jar": "gpu",
		"conf/config.yaml": "a: b\n", "bin/bash-java-utils.jar": "bju", "bin/flink": "#!/bin/sh\n", "examples/x.jar": "x",
	} {
		require.NoError(t, os.MkdirAll(filepath.Join(home, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(home, p), []byte(body), 0o644))
	}
	cache := t.TempDir()
	var out bytes.Buffer
	a, err := HomeArchive(home, cache, &out)
	require.NoError(t, err)
	assert.Contains(t, out.String(), "packing the Flink home")
	var names []string
	for n := range tarFiles(t, a) {
		names = append(names, n)
	}
	sort.Strings(names)
	assert.Equal(t, []string{"bin/bash-java-utils.jar", "conf/config.yaml", "lib/flink-dist-1.20.5.jar", "plugins/external-resource-gpu/gpu.jar"}, names,
		"what a Flink process needs; Flink's scripts and examples stay behind")

	out.Reset()
	b, err := HomeArchive(home, cache, &out)
	require.NoError(t, err)
	assert.Equal(t, a, b, "the same home: the same archive")
	assert.Empty(t, out.String(), "not packed again")

	require.NoError(t, os.WriteFile(filepath.Join(home, "lib", "extra.jar"), []byte("more"), 0o644))
	c, err := HomeArchive(home, cache, &out)
	require.NoError(t, err)
	assert.NotEqual(t, a, c, "another content: another archive")
}

func TestStageAddsTheHomeAndTheJar(t *testing.T) {
	job := &jobfile.Job{Framework: &jobfile.FrameworkPart{Name: frameworkName, Spec: &flinkSpec{Provided: "hdfs:///flink/flink.tar", Jar: "/w/job.jar"}}}
	require.NoError(t, stage(job, io.Discard))
	home := jobfile.FileSpec{Source: "hdfs:///flink/flink.tar", Alias: homeAlias}
	jar := jobfile.FileSpec{Source: "/w/job.jar", Alias: "job.jar"}
	assert.Equal(t, []jobfile.FileSpec{home}, job.AM.Archives)
	assert.Equal(t, []jobfile.FileSpec{home}, job.TaskExecutor.Archives)
	assert.Equal(t, []jobfile.FileSpec{jar}, job.AM.Files)
	assert.Equal(t, []jobfile.FileSpec{jar}, job.TaskExecutor.Files)

	taken := &jobfile.Job{Framework: &jobfile.FrameworkPart{Name: frameworkName, Spec: &flinkSpec{Provided: "hdfs:///f.tar"}}}
	taken.TaskExecutor.Archives = []jobfile.FileSpec{{Source: "/x/env.tgz", Alias: "flink"}}
	err := stage(taken, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `the alias "flink" of /x/env.tgz is taken`)
}

// LoadJob (check and submit's pre-flight, before staging) refuses a [flink] job whose Flink memory
// sizes cannot fit its containers, layering the home's conf/, the job file and -D
// (docs/flink.md#the-memory-check).
func TestLoadJobChecksFlinkMemory(t *testing.T) {
	p := writeJob(t, `
[flink]
home = "flink"
[flink.config]
"taskmanager.memory.managed.size" = "64m"
[taskexecutor]
memory = 1024
`)
	home := filepath.Join(filepath.Dir(p), "flink")
	for f, body := range map[string]string{"lib/flink-dist-1.20.5.jar": "", "plugins/.keep": "", "bin/bash-java-utils.jar": "",
		"conf/config.yaml": "taskmanager:\n  memory:\n    process.size: 1728m\n    task.heap.size: 2g\n"} {
		require.NoError(t, os.MkdirAll(filepath.Join(home, filepath.Dir(f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(home, f), []byte(body), 0o644))
	}
	_, err := client.LoadJob(p, client.JobOptions{})
	require.Error(t, err, "the home's 2g task heap does not fit a 1024 MiB TaskManager")
	assert.Contains(t, err.Error(), "taskexecutor.memory = 1024: a [flink] job's TaskManager")
	assert.Contains(t, err.Error(), `taskmanager.memory.task.heap.size = "2g"`)
	assert.Contains(t, err.Error(), "taskmanager.memory.task.heap.size (now \"2g\") fits from")
	assert.NotContains(t, err.Error(), "am.memory", "the JobManager fits")

	lj, err := client.LoadJob(p, client.JobOptions{Defines: []string{"taskmanager.memory.task.heap.size=128m"}})
	require.NoError(t, err, "-D wins over the home's configuration")
	assert.Equal(t, "128m", specOf(lj.Job).Config["taskmanager.memory.task.heap.size"])

	_, err = client.LoadJob(p, client.JobOptions{Defines: []string{"taskmanager.memory.task.heap.size=128m", "taskexecutor.memory=768", "am.memory=1024",
		"jobmanager.memory.heap.size=1g"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "taskexecutor.memory = 768")
	assert.Contains(t, err.Error(), "am.memory = 1024: the JobManager's process size (jobmanager.memory.process.size) is am.memory less the AM's 256 MiB, 768 MiB")
	assert.Contains(t, err.Error(), `jobmanager.memory.heap.size = "1g"`)

	// The job's own TLS on the REST API without a trust store would leave the AM unable to read the
	// outcome.
	_, err = client.LoadJob(p, client.JobOptions{Defines: []string{"taskmanager.memory.task.heap.size=128m", "security.ssl.rest.enabled=true"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `security.ssl.rest.enabled = true needs security.ssl.rest.truststore: the AM's REST client reads it (PKCS12) to reach the JobManager (docs/flink.md#your-own-rest-tls) (from -D security.ssl.rest.enabled=true)`)
}

// An archive is reused by name only in a directory the user alone owns and can write: in a shared one
// (YARN_AM_CACHE pointing there, or a name another user created first) a planted archive of the
// expected name is never used, the home is packed afresh into a new private directory, and submit
// says so. The private cache keeps the flinkArchivesKept most recently used archives.
func TestFlinkArchiveCacheIsPrivateAndBounded(t *testing.T) {
	home := t.TempDir()
	for p, body := range map[string]string{"lib/flink-dist.jar": "dist", "conf/config.yaml": "a: b\n", "plugins/p/p.jar": "p", "bin/bash-java-utils.jar": "bju"} {
		require.NoError(t, os.MkdirAll(filepath.Join(home, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(home, p), []byte(body), 0o644))
	}
	private := filepath.Join(t.TempDir(), "flink-archives")
	var out bytes.Buffer
	real, err := HomeArchive(home, private, &out)
	require.NoError(t, err)
	fi, err := os.Stat(private)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	want, err := os.ReadFile(real)
	require.NoError(t, err)

	shared := t.TempDir()
	require.NoError(t, os.Chmod(shared, 0o777))
	planted := filepath.Join(shared, filepath.Base(real))
	require.NoError(t, os.WriteFile(planted, []byte("planted archive"), 0o644))
	out.Reset()
	got, err := HomeArchive(home, shared, &out)
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(filepath.Dir(got)) })
	assert.NotEqual(t, planted, got, "the planted archive is not used")
	b, err := os.ReadFile(got)
	require.NoError(t, err)
	assert.Equal(t, want, b, "packed afresh from the home")
	assert.Contains(t, out.String(), "not reusing Flink archives in "+shared+": it is -rwxrwxrwx, writable by others")
	di, err := os.Stat(filepath.Dir(got))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), di.Mode().Perm(), "into a private directory")

	// A link in place of the cache directory is not private either.
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(shared, link))
	out.Reset()
	got, err = HomeArchive(home, link, &out)
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(filepath.Dir(got)) })
	assert.NotEqual(t, filepath.Join(link, filepath.Base(real)), got)
	assert.Contains(t, out.String(), "not a directory")

	// Five older archives: after packing a new one, it and the two most recently used stay.
	old := time.Now().Add(-time.Hour)
	for i := 0; i < 5; i++ {
		n := filepath.Join(private, fmt.Sprintf("flink-home-old%d.tar", i))
		require.NoError(t, os.WriteFile(n, []byte("x"), 0o600))
		at := old.Add(time.Duration(i) * time.Minute)
		require.NoError(t, os.Chtimes(n, at, at))
	}
	require.NoError(t, os.Chtimes(real, old.Add(-time.Hour), old.Add(-time.Hour)))
	require.NoError(t, os.WriteFile(filepath.Join(home, "lib", "extra.jar"), []byte("more"), 0o644))
	newer, err := HomeArchive(home, private, &out)
	require.NoError(t, err)
	left, err := filepath.Glob(filepath.Join(private, "flink-home-*.tar"))
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{newer, filepath.Join(private, "flink-home-old3.tar"), filepath.Join(private, "flink-home-old4.tar")},
		left, "the newest three")
}

// The archive cache counts as private only if every directory above it is too (privatePath): owned
// by the user or root, and writable by nobody else unless sticky (as /tmp); a link above it owned by
// the user or root is followed and its target checked the same way. A planted parent (writable by
// others, another user's, or a link to such a directory) makes HomeArchive pack afresh into a new
// private directory, as the no-$HOME fallback under a shared TMPDIR does.
func TestArchiveCacheChecksEveryDirectoryAbove(t *testing.T) {
	home := t.TempDir()
	for p, body := range map[string]string{"lib/flink-dist.jar": "dist", "plugins/p/p.jar": "p", "bin/bash-java-utils.jar": "bju"} {
		require.NoError(t, os.MkdirAll(filepath.Join(home, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(home, p), []byte(body), 0o644))
	}
	reused := func(t *testing.T, cache string) (bool, string) {
		t.Helper()
		var out bytes.Buffer
		first, err := HomeArchive(home, cache, &out)
		require.NoError(t, err)
		t.Cleanup(func() { _ = os.RemoveAll(filepath.Dir(first)) })
		second, err := HomeArchive(home, cache, &out)
		require.NoError(t, err)
		t.Cleanup(func() { _ = os.RemoveAll(filepath.Dir(second)) })
		return first == second && filepath.Dir(first) == cache, out.String()
	}

	parent := t.TempDir()
	require.NoError(t, os.Chmod(parent, 0o777))
	ok, out := reused(t, filepath.Join(parent, "mine", "flink-archives"))
	assert.False(t, ok, "below a parent anyone may write")
	assert.Contains(t, out, "the directory "+parent+" above it is -rwxrwxrwx, writable by others")

	require.NoError(t, os.Chmod(parent, 0o777|os.ModeSticky))
	ok, out = reused(t, filepath.Join(parent, "mine", "flink-archives"))
	assert.True(t, ok, "below a sticky parent (as /tmp) the user's own directory is private: %s", out)

	// A link above the cache, the user's own, pointing into a directory others may write.
	open := t.TempDir()
	require.NoError(t, os.Chmod(open, 0o777))
	require.NoError(t, os.MkdirAll(filepath.Join(open, "target"), 0o700))
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(filepath.Join(open, "target"), link))
	ok, out = reused(t, filepath.Join(link, "flink-archives"))
	assert.False(t, ok, "a link into a directory others may write")
	assert.Contains(t, out, "the directory "+open+" above it is -rwxrwxrwx, writable by others")
	require.NoError(t, os.Chmod(open, 0o755))
	ok, out = reused(t, filepath.Join(link, "flink-archives"))
	assert.True(t, ok, "a link of the user's to a private directory is followed: %s", out)

	// The no-$HOME fallback under a shared temporary directory.
	tmp := t.TempDir()
	require.NoError(t, os.Chmod(tmp, 0o777))
	t.Setenv("YARN_AM_CACHE", "")
	t.Setenv("HOME", "")
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("TMPDIR", tmp)
	cache := flinkArchiveCache()
	require.True(t, strings.HasPrefix(cache, tmp+"/"), "the fallback is under TMPDIR: %s", cache)
	assert.Contains(t, privateArchiveDir(cache), "the directory "+tmp+" above it is -rwxrwxrwx, writable by others")

	// A parent another user owns (who could rename the cache away and plant their own): only root
	// can make one here.
	if os.Geteuid() != 0 {
		t.Log("not root: the case of a parent owned by another user needs chown")
		return
	}
	theirs := filepath.Join(t.TempDir(), "theirs")
	require.NoError(t, os.MkdirAll(theirs, 0o755))
	require.NoError(t, os.Chown(theirs, 4242, 4242))
	ok, out = reused(t, filepath.Join(theirs, "flink-archives"))
	assert.False(t, ok)
	assert.Contains(t, out, "the directory "+theirs+" above it is owned by uid 4242, not by you (uid 0) or root")
	theirLink := filepath.Join(t.TempDir(), "their-link")
	require.NoError(t, os.Symlink(t.TempDir(), theirLink))
	require.NoError(t, os.Lchown(theirLink, 4242, 4242))
	ok, out = reused(t, filepath.Join(theirLink, "flink-archives"))
	assert.False(t, ok)
	assert.Contains(t, out, "the link "+theirLink+" above it is owned by uid 4242")
}

// Two directories of one layout, file sizes, modes and modification times (two fake JDKs written in
// the same second, as two tests at once did), and one file rewritten with as many bytes within the
// same second: each is its own archive, holding its own bytes. Named by seconds and relative paths
// alone, the second JDK shipped the first one's release file.
func TestArchivesOfOneListingAreTwoWhenTheirBytesDiffer(t *testing.T) {
	when := time.Unix(1_800_000_000, 0)
	jdk := func(version string) string {
		dir := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "bin"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "bin", "java"), []byte("#!/bin/sh\nexit 1\n"), 0o755))
		release := filepath.Join(dir, "release")
		require.NoError(t, os.WriteFile(release, []byte("JAVA_VERSION=\""+version+"\"\n"), 0o644))
		for _, p := range []string{release, filepath.Join(dir, "bin", "java"), filepath.Join(dir, "bin"), dir} {
			require.NoError(t, os.Chtimes(p, when, when))
		}
		return dir
	}
	cache := t.TempDir()
	seven, eight := jdk("1.7.0"), jdk("1.8.0")
	a, err := javaHomeArchive(seven, cache, io.Discard)
	require.NoError(t, err)
	b, err := javaHomeArchive(eight, cache, io.Discard)
	require.NoError(t, err)
	assert.NotEqual(t, a, b, "two JDKs of one listing but their directory")
	assert.Equal(t, "JAVA_VERSION=\"1.7.0\"\n", tarFiles(t, a)["release"])
	assert.Equal(t, "JAVA_VERSION=\"1.8.0\"\n", tarFiles(t, b)["release"], "the second JDK's own release file")

	// The first JDK's release rewritten with as many bytes, its time set 1 ms later: same second.
	release := filepath.Join(seven, "release")
	require.NoError(t, os.WriteFile(release, []byte("JAVA_VERSION=\"1.9.0\"\n"), 0o644))
	require.NoError(t, os.Chtimes(release, when.Add(time.Millisecond), when.Add(time.Millisecond)))
	c, err := javaHomeArchive(seven, cache, io.Discard)
	require.NoError(t, err)
	assert.NotEqual(t, a, c, "a file rewritten within the same second is another content")
	assert.Equal(t, "JAVA_VERSION=\"1.9.0\"\n", tarFiles(t, c)["release"])
}

// tarFiles is each regular file of the tar archive at path, by name, with its bytes.
func tarFiles(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	files := map[string]string{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		require.NoError(t, err, path)
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			require.NoError(t, err, path)
			files[h.Name] = string(b)
		}
	}
}
