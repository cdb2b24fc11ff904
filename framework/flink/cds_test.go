package flink

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	dist "github.com/yarn-am/yarn-am/framework/flink/dist"
	"github.com/yarn-am/yarn-am/jobfile"
)

// cdsFixture is a container's working directory with a Flink home (./flink) and a JDK whose identity
// dist.ArchiveName reads.
type cdsFixture struct {
	dir, java string
	home      *dist.Home
	identity  string
}

func newCDSFixture(t *testing.T) *cdsFixture {
	t.Helper()
	f := &cdsFixture{dir: t.TempDir()}
	jdk := t.TempDir()
	for p, body := range map[string]string{
		filepath.Join(f.dir, "flink/lib/flink-dist-1.20.5.jar"): "dist",
		filepath.Join(f.dir, "flink/lib/log4j-api-2.24.3.jar"):  "log4j",
		filepath.Join(f.dir, "flink/bin/bash-java-utils.jar"):   "bju",
		filepath.Join(f.dir, "flink/plugins/gpu/gpu.jar"):       "gpu",
		filepath.Join(jdk, "bin/java"):                          "#!/bin/sh\n",
		filepath.Join(jdk, "release"):                           "JAVA_VERSION=\"17.0.15\"\n",
		filepath.Join(jdk, "lib/modules"):                       "modules",
		filepath.Join(jdk, "lib/server/classes.jsa"):            "base archive",
	} {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o755))
	}
	f.java = filepath.Join(jdk, "bin/java")
	var err error
	f.home, err = dist.OpenHome(filepath.Join(f.dir, "flink"))
	require.NoError(t, err)
	name, err := dist.ArchiveName(f.home, f.java, dist.RoleApplication)
	require.NoError(t, err)
	f.identity = strings.TrimSuffix(name, ".jsa")
	return f
}

// localise puts an archive with content into the working directory as StageRemote's alias names it.
func (f *cdsFixture) localise(t *testing.T, identity, content string) string {
	t.Helper()
	sum := sha256.Sum256([]byte(content))
	p := filepath.Join(f.dir, cdsAliasPrefix+identity+"."+hex.EncodeToString(sum[:])+".jsa")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// A process maps the localised archive only when it is for its JVM and home and its content hashes
// to the SHA-256 in its name; otherwise it starts without one and says why.
func TestPlanCDSUsesOnlyAVerifiedArchiveOfItsOwnJVM(t *testing.T) {
	on := &Spec{ClassDataSharing: true}

	f := newCDSFixture(t)
	p := planCDS(on, f.dir, f.home, f.java)
	assert.Equal(t, dist.CDS{}, p.cds)
	assert.Equal(t, f.identity, p.identity, "the driver makes an archive of this identity after the job")
	assert.Contains(t, strings.Join(p.say, "\n"), "no archive yet for "+f.identity)

	good := f.localise(t, f.identity, "archived classes")
	p = planCDS(on, f.dir, f.home, f.java)
	assert.Equal(t, dist.CDS{Use: good}, p.cds)
	assert.Contains(t, strings.Join(p.say, "\n"), "using the archive "+filepath.Base(good)+" (SHA-256 verified")

	// The same name, other bytes: refused, not used.
	require.NoError(t, os.WriteFile(good, []byte("archived classeZ"), 0o644))
	p = planCDS(on, f.dir, f.home, f.java)
	assert.Equal(t, dist.CDS{}, p.cds)
	assert.Contains(t, strings.Join(p.say, "\n"), "is not the one recorded when it was made")
	assert.Contains(t, strings.Join(p.say, "\n"), "refused, the process starts without it")
	require.NoError(t, os.Remove(good))

	// Another JDK's or home's archive: not used (the JVM would refuse it too).
	other := f.localise(t, "flink-1.20.5-jdk21.0.2-jobmanager-0123456789abcdef", "other classes")
	p = planCDS(on, f.dir, f.home, f.java)
	assert.Equal(t, dist.CDS{}, p.cds)
	assert.Contains(t, strings.Join(p.say, "\n"), "made for another JVM or home")
	require.NoError(t, os.Remove(other))

	// A JDK 11 writes no dynamic archives: nothing used, nothing made.
	release := filepath.Join(filepath.Dir(filepath.Dir(f.java)), "release")
	require.NoError(t, os.WriteFile(release, []byte("JAVA_VERSION=\"11.0.22\"\n"), 0o644))
	p = planCDS(on, f.dir, f.home, f.java)
	assert.Equal(t, dist.CDS{}, p.cds)
	assert.Empty(t, p.identity, "no archive to make")
	assert.Contains(t, strings.Join(p.say, "\n"), "JDK 11.0.22 writes no dynamic archives")
	require.NoError(t, os.WriteFile(release, []byte("JAVA_VERSION=\"17.0.15\"\n"), 0o644))

	// A JDK without its base archive (a jlink runtime made without --generate-cds-archive) cannot
	// dump a dynamic one, nor map one: nothing used, nothing made.
	base := filepath.Join(filepath.Dir(filepath.Dir(f.java)), "lib/server/classes.jsa")
	require.NoError(t, os.Rename(base, base+".gone"))
	f.localise(t, f.identity, "archived classes")
	p = planCDS(on, f.dir, f.home, f.java)
	assert.Equal(t, dist.CDS{}, p.cds)
	assert.Empty(t, p.identity, "no archive to make")
	assert.Contains(t, strings.Join(p.say, "\n"), "the JDK has no base archive ("+base+")")
	require.NoError(t, os.Rename(base+".gone", base))

	// class-data-sharing = false: nothing, said nothing.
	f.localise(t, f.identity, "archived classes")
	p = planCDS(&Spec{}, f.dir, f.home, f.java)
	assert.Equal(t, cdsPlan{}, p)
}

type dirFS map[string][]os.FileInfo

func (d dirFS) ReadDir(dir string) ([]os.FileInfo, error) {
	e, ok := d[dir]
	if !ok {
		return nil, os.ErrNotExist
	}
	return e, nil
}

type fileInfo struct {
	name string
	mod  time.Time
	mode os.FileMode
}

func (f fileInfo) Name() string       { return f.name }
func (f fileInfo) Size() int64        { return 45 << 20 }
func (f fileInfo) Mode() os.FileMode  { return f.mode }
func (f fileInfo) ModTime() time.Time { return f.mod }
func (f fileInfo) IsDir() bool        { return f.mode.IsDir() }
func (f fileInfo) Sys() any           { return nil }

// Stage records the home's key for the driver; StageRemote adds the home's newest well-named archive
// to the AM's and the TaskExecutors' files, or says there is none yet.
func TestStageRemoteAddsTheNewestArchiveOfTheHome(t *testing.T) {
	newJob := func(cds bool) *jobfile.Job {
		job := &jobfile.Job{Framework: &jobfile.FrameworkPart{Name: Name, Spec: &Spec{Provided: "hdfs:///flink/flink.tar", Jar: "/w/job.jar", ClassDataSharing: cds}}}
		require.NoError(t, stage(job, &bytes.Buffer{}))
		return job
	}
	job := newJob(true)
	key := job.AM.Env[EnvCDSHome]
	require.Len(t, key, 32)
	assert.Equal(t, key, cdsHomeKey("hdfs:///flink/flink.tar"))
	assert.NotEqual(t, key, cdsHomeKey("hdfs:///flink/other.tar"))
	assert.Equal(t, cdsHomeKey("/cache/flink-home-0a1b.tar"), cdsHomeKey("/other/cache/flink-home-0a1b.tar"),
		"a packed home is named by its content wherever it was packed")

	dir := cdsDir("alice", key)
	assert.Equal(t, "/user/alice/.yarn-am/cache/cds/"+key, dir)
	var out bytes.Buffer
	require.NoError(t, Flink{}.StageRemote(job, dirFS{}, "alice", "hdfs://nn:8020", &out))
	assert.Contains(t, out.String(), "no archive of this Flink home yet")
	assert.Len(t, job.AM.Files, 1, "the jar only")

	now := time.Now()
	sum := strings.Repeat("ab", 32)
	old := "flink-1.20.5-jdk17.0.15-jobmanager-0123456789abcdef." + sum + ".jsa"
	newest := "flink-1.20.5-jdk17.0.15-jobmanager-fedcba9876543210." + sum + ".jsa"
	fsys := dirFS{dir: {
		fileInfo{old, now.Add(-time.Hour), 0o600},
		fileInfo{newest, now, 0o600},
		fileInfo{".tmp-0011", now.Add(time.Minute), 0o600},                        // an upload under way
		fileInfo{"flink-x-jobmanager-zz.jsa", now.Add(time.Minute), 0o600},        // not an archive's name
		fileInfo{"sub." + sum + ".jsa", now.Add(time.Minute), os.ModeDir | 0o700}, // not a file
	}}
	out.Reset()
	require.NoError(t, Flink{}.StageRemote(job, fsys, "alice", "hdfs://nn:8020", &out))
	want := jobfile.FileSpec{Source: "hdfs://nn:8020" + dir + "/" + newest, Alias: cdsAliasPrefix + newest}
	assert.Equal(t, want, job.AM.Files[1])
	assert.Equal(t, want, job.TaskExecutor.Files[1])
	assert.Contains(t, out.String(), "class-data sharing: archive "+newest+" (45.0 MiB) from the cache")

	off := newJob(false)
	assert.NotContains(t, off.AM.Env, EnvCDSHome)
	require.NoError(t, Flink{}.StageRemote(off, fsys, "alice", "hdfs://nn:8020", &out))
	assert.Len(t, off.AM.Files, 1, "class-data-sharing = false: no archive")
}

// A JVM that ends at once while the archive is being made (a JDK that cannot dump) ends the making
// with its reason: the wait for its exit is not taken twice, which left the driver, and with it the
// application, hanging after a finished job.
func TestTrainArchiveEndsWhenTheJVMEndsAtOnce(t *testing.T) {
	f := newCDSFixture(t)
	jdk := filepath.Dir(filepath.Dir(f.java))
	require.NoError(t, os.WriteFile(f.java, []byte("#!/bin/sh\necho 'DynamicDumpSharedSpaces is unsupported' >&2\nexit 1\n"), 0o755))
	s := &flinkSetup{job: &jobfile.Job{AM: jobfile.AMSpec{MemoryMB: 2048}}, spec: &Spec{ClassDataSharing: true},
		home: f.home, conf: dist.NewConfig(), dir: f.dir, javaHome: jdk}
	done := make(chan error, 1)
	go func() {
		_, err := trainArchive(context.Background(), s)
		done <- err
	}()
	select {
	case err := <-done:
		require.Error(t, err)
		assert.Contains(t, err.Error(), "it ended before its log said")
		assert.Contains(t, err.Error(), "DynamicDumpSharedSpaces is unsupported")
	case <-time.After(time.Minute): // generous: the JVM here is a shell script that exits at once
		t.Fatal("trainArchive did not return after its JVM ended")
	}
}
