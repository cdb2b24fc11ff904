package flink

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/jobfile"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// cdsFixture is a container's working directory with a Flink home (./flink) and a JDK whose identity
// flinkdist.ArchiveName reads.
type cdsFixture struct {
	dir, java string
	home      *flinkdist.Home
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
	f.home, err = flinkdist.OpenHome(filepath.Join(f.dir, "flink"))
	require.NoError(t, err)
	name, err := flinkdist.ArchiveName(f.home, f.java, flinkdist.RoleApplication)
	require.NoError(t, err)
	f.identity = strings.TrimSuffix(name, ".jsa")
	return f
}

// testAppKey is an application's key of a user's key (cdsAppKey) in these tests.
var testAppKey = cdsAppKey(bytes.Repeat([]byte{7}, 32), "application_1_0001")

// localise puts an archive with content into the working directory as StageRemote's alias names it,
// and returns its path and its name in the cache (what submit puts into envCDSArchive).
func (f *cdsFixture) localise(t *testing.T, identity, content string) (string, string) {
	t.Helper()
	sum := sha256.Sum256([]byte(content))
	name := cdsArchiveName(identity, hex.EncodeToString(sum[:]), "application_1_0001", testAppKey)
	p := filepath.Join(f.dir, cdsAliasPrefix+name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p, name
}

// A process maps the localised archive only when it is the one submit took (envCDSArchive), for its
// JVM and home, and its content hashes to the SHA-256 in its name; otherwise it starts without one
// and says why.
func TestPlanCDSUsesOnlyAVerifiedArchiveOfItsOwnJVM(t *testing.T) {
	on := &flinkSpec{ClassDataSharing: true}

	f := newCDSFixture(t)
	p := planCDS(on, f.dir, f.home, f.java, "")
	assert.Equal(t, flinkdist.CDS{}, p.cds)
	assert.Equal(t, f.identity, p.identity, "the driver makes an archive of this identity after the job")
	assert.Contains(t, strings.Join(p.say, "\n"), "no archive yet for "+f.identity)

	good, name := f.localise(t, f.identity, "archived classes")
	p = planCDS(on, f.dir, f.home, f.java, name)
	assert.Equal(t, flinkdist.CDS{Use: good}, p.cds)
	assert.Contains(t, strings.Join(p.say, "\n"), "using the archive "+filepath.Base(good)+" (SHA-256 verified")

	// Not the archive submit took (none, or another): not used, whatever its name says.
	for _, approved := range []string{"", "flink-1.20.5-jdk17.0.15-jobmanager-0123456789abcdef." + strings.Repeat("0", 64) + ".application_1_0002." + strings.Repeat("0", 32) + ".jsa"} {
		p = planCDS(on, f.dir, f.home, f.java, approved)
		assert.Equal(t, flinkdist.CDS{}, p.cds, "approved %q", approved)
		assert.Contains(t, strings.Join(p.say, "\n"), "is not the archive submit took")
	}

	// The same name, other bytes: refused, not used.
	require.NoError(t, os.WriteFile(good, []byte("archived classeZ"), 0o644))
	p = planCDS(on, f.dir, f.home, f.java, name)
	assert.Equal(t, flinkdist.CDS{}, p.cds)
	assert.Contains(t, strings.Join(p.say, "\n"), "is not the one recorded when it was made")
	assert.Contains(t, strings.Join(p.say, "\n"), "refused, the process starts without it")
	require.NoError(t, os.Remove(good))

	// Another JDK's or home's archive: not used (the JVM would refuse it too).
	other, otherName := f.localise(t, "flink-1.20.5-jdk21.0.2-jobmanager-0123456789abcdef", "other classes")
	p = planCDS(on, f.dir, f.home, f.java, otherName)
	assert.Equal(t, flinkdist.CDS{}, p.cds)
	assert.Contains(t, strings.Join(p.say, "\n"), "made for another JVM or home")
	require.NoError(t, os.Remove(other))

	// A JDK 11 (not tested with yarn-am's archives): nothing used, nothing made.
	release := filepath.Join(filepath.Dir(filepath.Dir(f.java)), "release")
	require.NoError(t, os.WriteFile(release, []byte("JAVA_VERSION=\"11.0.22\"\n"), 0o644))
	p = planCDS(on, f.dir, f.home, f.java, "")
	assert.Equal(t, flinkdist.CDS{}, p.cds)
	assert.Empty(t, p.identity, "no archive to make")
	assert.Contains(t, strings.Join(p.say, "\n"), "JDK 11.0.22; yarn-am makes and maps archives with JDK 13 or later")
	require.NoError(t, os.WriteFile(release, []byte("JAVA_VERSION=\"17.0.15\"\n"), 0o644))

	// A JDK without its base archive (a jlink runtime made without --generate-cds-archive), taken
	// as one without class-data sharing: nothing used, nothing made.
	base := filepath.Join(filepath.Dir(filepath.Dir(f.java)), "lib/server/classes.jsa")
	require.NoError(t, os.Rename(base, base+".gone"))
	_, name = f.localise(t, f.identity, "archived classes")
	p = planCDS(on, f.dir, f.home, f.java, name)
	assert.Equal(t, flinkdist.CDS{}, p.cds)
	assert.Empty(t, p.identity, "no archive to make")
	assert.Contains(t, strings.Join(p.say, "\n"), "the JDK has no base archive ("+base+")")
	require.NoError(t, os.Rename(base+".gone", base))

	// class-data-sharing = false: nothing, said nothing.
	_, name = f.localise(t, f.identity, "archived classes")
	p = planCDS(&flinkSpec{}, f.dir, f.home, f.java, name)
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

// Stage records the home's key for the driver; StageRemote adds the home's newest archive whose
// record the user's key made to the AM's and the TaskExecutors' files and names it in the AM's
// environment, gives the driver the application's key, and refuses the others, saying so on its
// output and in the AM's environment (for the AM's event): a planted archive with a consistent name
// and a newer time, one of the old unsigned form, one another key signed (another machine) and one
// renamed to another application. Without a key of the user's, class-data sharing is off for the run.
func TestStageRemoteTakesOnlyAnArchiveYourKeySigned(t *testing.T) {
	newJob := func(cds bool) *jobfile.Job {
		job := &jobfile.Job{Framework: &jobfile.FrameworkPart{Name: frameworkName, Spec: &flinkSpec{Provided: "hdfs:///flink/flink.tar", Jar: "/w/job.jar", ClassDataSharing: cds}}}
		require.NoError(t, stage(job, &bytes.Buffer{}))
		return job
	}
	userKey := bytes.Repeat([]byte{7}, 32)
	keys := func(name string) ([]byte, error) {
		assert.Equal(t, cdsUserKey, name)
		return userKey, nil
	}
	job := newJob(true)
	key := job.AM.Env[envCDSHome]
	require.Len(t, key, 32)
	assert.Equal(t, key, cdsHomeKey("hdfs:///flink/flink.tar"))
	assert.NotEqual(t, key, cdsHomeKey("hdfs:///flink/other.tar"))
	assert.Equal(t, cdsHomeKey("/cache/flink-home-0a1b.tar"), cdsHomeKey("/other/cache/flink-home-0a1b.tar"),
		"a packed home is named by its content wherever it was packed")

	dir := cdsDir("alice", key)
	assert.Equal(t, "/user/alice/.yarn-am/cache/cds/"+key, dir)
	var out bytes.Buffer
	remote := func(fsys framework.RemoteFS) framework.RemoteStage {
		return framework.RemoteStage{FS: fsys, User: "alice", DefaultFS: "hdfs://nn:8020", AppID: "application_5_0009", UserKey: keys, Out: &out}
	}
	staged, err := flinkFramework{}.StageRemote(job, remote(dirFS{}))
	require.NoError(t, err)
	assert.Contains(t, out.String(), "no archive of this Flink home yet")
	assert.Len(t, job.AM.Files, 1, "the jar only")
	assert.Equal(t, map[string][]byte{secretCDSKey: cdsAppKey(userKey, "application_5_0009")}, staged.DriverSecrets,
		"the driver signs with its application's key, never the user's")
	assert.NotEqual(t, userKey, staged.DriverSecrets[secretCDSKey])

	now := time.Now()
	identity := "flink-1.20.5-jdk17.0.15-jobmanager-0123456789abcdef"
	sum := strings.Repeat("ab", 32)
	good := cdsArchiveName(identity, sum, "application_5_0001", cdsAppKey(userKey, "application_5_0001"))
	older := cdsArchiveName(identity, strings.Repeat("cd", 32), "application_5_0000", cdsAppKey(userKey, "application_5_0000"))
	planted := identity + "." + sum + ".application_5_0002." + strings.Repeat("0", 32) + ".jsa"
	anotherKey := cdsArchiveName(identity, sum, "application_5_0003", cdsAppKey(bytes.Repeat([]byte{8}, 32), "application_5_0003"))
	renamed := strings.Replace(good, "application_5_0001", "application_5_0004", 1)
	fsys := dirFS{dir: {
		fileInfo{older, now.Add(-2 * time.Hour), 0o600},
		fileInfo{good, now.Add(-time.Hour), 0o600},
		fileInfo{planted, now, 0o600},
		fileInfo{identity + "." + sum + ".jsa", now.Add(time.Minute), 0o600}, // the old form: no record
		fileInfo{anotherKey, now, 0o600},
		fileInfo{renamed, now, 0o600},
		fileInfo{".tmp-0011", now.Add(time.Minute), 0o600}, // an upload under way
		fileInfo{"notes.txt", now.Add(time.Minute), 0o600},
		fileInfo{"x$(touch owned).jsa", now.Add(2 * time.Minute), 0o600},
	}}
	out.Reset()
	_, err = flinkFramework{}.StageRemote(job, remote(fsys))
	require.NoError(t, err)
	want := jobfile.FileSpec{Source: "hdfs://nn:8020" + dir + "/" + good, Alias: cdsAliasPrefix + good}
	assert.Equal(t, want, job.AM.Files[1])
	assert.Equal(t, want, job.TaskExecutor.Files[1])
	assert.Equal(t, good, job.AM.Env[envCDSArchive])
	assert.Contains(t, out.String(), "class-data sharing: archive "+good+" (45.0 MiB) from the cache")
	note := job.AM.Env[envCDSRefused]
	assert.Contains(t, note, "refused 5 archive(s) of the cache that hold no record your key made")
	assert.Contains(t, note, "the newest x??touch?owned?.jsa", "a planted name reaches the launch script in safe characters only")
	assert.Contains(t, out.String(), note)

	// No key of the user's (one readable by others, say): off for this run, said why.
	job = newJob(true)
	out.Reset()
	staged, err = flinkFramework{}.StageRemote(job, framework.RemoteStage{FS: fsys, User: "alice", DefaultFS: "hdfs://nn:8020", AppID: "application_5_0009",
		UserKey: func(string) ([]byte, error) { return nil, errors.New("your key k is -rw-r--r--, readable by others") }, Out: &out})
	require.NoError(t, err)
	assert.Empty(t, staged.DriverSecrets)
	assert.NotContains(t, job.AM.Env, envCDSHome, "the driver makes no archive")
	assert.NotContains(t, job.AM.Env, envCDSArchive)
	assert.Len(t, job.AM.Files, 1)
	assert.Contains(t, out.String(), "class-data sharing: off for this run: your key k is -rw-r--r--, readable by others")

	off := newJob(false)
	assert.NotContains(t, off.AM.Env, envCDSHome)
	staged, err = flinkFramework{}.StageRemote(off, remote(fsys))
	require.NoError(t, err)
	assert.Len(t, off.AM.Files, 1, "class-data-sharing = false: no archive")
	assert.Empty(t, staged.DriverSecrets)
}

// A record holds only for the identity, SHA-256 and application it was made for, under the key of
// that application that the user's key gives; the longest identity's name fits HDFS's 255 bytes; the
// driver reads its application's key from its token file and its application from its container.
func TestCDSRecords(t *testing.T) {
	user := bytes.Repeat([]byte{1}, 32)
	app := "application_1700000000000_0042"
	identity := "flink-" + strings.Repeat("v", 64) + "-jobmanager-0123456789abcdef"
	sum := strings.Repeat("e", 64)
	name := cdsArchiveName(identity, sum, app, cdsAppKey(user, app))
	assert.True(t, cdsSigned(name, user))
	longest := "application_9999999999999_9999999999"
	assert.True(t, cdsSigned(cdsArchiveName(identity, sum, longest, cdsAppKey(user, longest)), user))
	assert.LessOrEqual(t, len(cdsArchiveName(identity, sum, longest, cdsAppKey(user, longest))), 255, "HDFS's limit on a name")
	assert.False(t, cdsSigned(name, bytes.Repeat([]byte{2}, 32)), "another user's key")
	assert.False(t, cdsSigned(strings.Replace(name, sum, strings.Repeat("f", 64), 1), user), "another content")
	assert.False(t, cdsSigned(strings.Replace(name, "_0042", "_0043", 1), user), "another application")
	assert.False(t, cdsSigned(identity+"."+sum+".jsa", user), "no record")

	tokens := filepath.Join(t.TempDir(), "tokens")
	creds := yarnrpc.NewCredentials()
	creds.Secrets[secretCDSKey] = cdsAppKey(user, app)
	require.NoError(t, creds.WriteFile(tokens))
	gotApp, gotKey, err := cdsSigningKey(tokens, "container_1700000000000_0042_01_000001")
	require.NoError(t, err)
	assert.Equal(t, app, gotApp)
	assert.Equal(t, name, cdsArchiveName(identity, sum, gotApp, gotKey), "the driver's record is the one submit checks")
	empty := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, yarnrpc.NewCredentials().WriteFile(empty))
	_, _, err = cdsSigningKey(empty, "container_1700000000000_0042_01_000001")
	assert.ErrorContains(t, err, "no key \"yarn-am.driver.flink-cds-key\" to sign the archive with")
	_, _, err = cdsSigningKey("", "c")
	assert.ErrorContains(t, err, "HADOOP_TOKEN_FILE_LOCATION is not set")
}

// The AM passes the archive submit took to its TaskExecutors and says in an event what submit
// refused (docs/flink.md#class-data-sharing).
func TestStartAMPassesTheArchiveAndSaysWhatWasRefused(t *testing.T) {
	p := writeJob(t, "[flink]\nhome = \"flink\"\njar = \"job.jar\"\n")
	fakeFlinkHome(t, filepath.Dir(p))
	j, err := jobfile.LoadJob(p)
	require.NoError(t, err)
	t.Chdir(t.TempDir())
	t.Setenv(envCDSArchive, "flink-a.jsa")
	t.Setenv(envCDSRefused, "refused 1 archive(s) of the cache that hold no record your key made")
	var events []contract.Event
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fw, err := flinkFramework{}.StartAM(ctx, j, framework.AMStart{Host: "127.0.0.1", TLS: newTestAuthority(t), Emit: func(e contract.Event) { events = append(events, e) }})
	require.NoError(t, err)
	assert.Equal(t, "flink-a.jsa", fw.WorkerEnv[envCDSArchive])
	require.NotEmpty(t, events)
	assert.Equal(t, contract.SeverityWarning, events[0].Severity)
	assert.Equal(t, "class-data sharing: submit refused 1 archive(s) of the cache that hold no record your key made", events[0].Message)
}

// A JVM that cannot write the archive (a JDK that cannot dump) ends the making with its reason,
// and leaves no archive; a class list that names no class makes none.
func TestTrainArchiveSaysWhyTheJVMWroteNone(t *testing.T) {
	f := newCDSFixture(t)
	jdk := filepath.Dir(filepath.Dir(f.java))
	require.NoError(t, os.WriteFile(f.java, []byte("#!/bin/sh\necho 'Error: non-empty diagnostic' >&2\nexit 1\n"), 0o755))
	s := &flinkSetup{job: &jobfile.Job{AM: jobfile.AMSpec{MemoryMB: 2048}}, spec: &flinkSpec{ClassDataSharing: true},
		home: f.home, conf: flinkdist.NewConfig(), dir: f.dir, javaHome: jdk}
	list := filepath.Join(f.dir, cdsClassListName)
	require.NoError(t, os.WriteFile(list, []byte("java/lang/Object\norg/apache/flink/runtime/entrypoint/ClusterEntrypoint\n"), 0o600))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // generous: the JVM here is a shell script that exits at once
	defer cancel()
	_, err := trainArchive(ctx, s, f.java, list, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the JVM that writes the archive failed")
	assert.Contains(t, err.Error(), "Error: non-empty diagnostic")
	assert.NoFileExists(t, filepath.Join(f.dir, ".yarn-am-cds-new.jsa"))

	require.NoError(t, os.WriteFile(list, []byte("# only a comment\n"), 0o600))
	_, err = trainArchive(ctx, s, f.java, list, "")
	assert.ErrorContains(t, err, "names no class")
	_, err = trainArchive(ctx, s, f.java, filepath.Join(f.dir, "absent.lst"), "")
	assert.ErrorContains(t, err, "the JobManager's class list")
	// The job's code ran in the JVM that wrote the list: a pipe in its place is refused, not read
	// (which would wait for a writer for ever).
	pipe := filepath.Join(f.dir, "pipe.lst")
	require.NoError(t, syscall.Mkfifo(pipe, 0o600))
	_, err = trainArchive(ctx, s, f.java, pipe, "")
	assert.ErrorContains(t, err, "not a regular file")
}

// The class list comes from the JVM that ran the job's code: only class names and the JDK's lambda
// lines are passed to the JVM that writes the archive; what would make it take a class from
// elsewhere ("source:", a jar anywhere, for a class loader of the job's own) is dropped.
func TestCDSClassNamesKeepsOnlyNamesAndLambdaLines(t *testing.T) {
	list := strings.Join([]string{
		"# NOTE: Do not modify this file.",
		"java/lang/Object",
		"org/apache/flink/runtime/executiongraph/DefaultExecutionGraph",
		"org/apache/flink/runtime/rpc/RpcGateway$$Lambda$1 ",
		"@lambda-proxy java/lang/Module apply ()Ljava/util/function/BiFunction; (Ljava/lang/Object;)Ljava/lang/Object; REF_invokeStatic java/lang/Module lambda$x$0 (Ljava/lang/Object;)V (Ljava/lang/Object;)V",
		"@lambda-form-invoker [LF_RESOLVE] java.lang.invoke.DirectMethodHandle$Holder invokeStatic L7_L",
		"evil/Planted id: 7 super: 0 source: /tmp/evil.jar",
		"java/lang/String id: 1",
		"@cp evil/Planted 1 2",
		"",
		strings.Repeat("a", 2000),
	}, "\n")
	got, n := cdsClassNames([]byte(list))
	assert.Equal(t, 2, n)
	assert.Equal(t, "java/lang/Object\norg/apache/flink/runtime/executiongraph/DefaultExecutionGraph\n"+
		"@lambda-proxy java/lang/Module apply ()Ljava/util/function/BiFunction; (Ljava/lang/Object;)Ljava/lang/Object; REF_invokeStatic java/lang/Module lambda$x$0 (Ljava/lang/Object;)V (Ljava/lang/Object;)V\n"+
		"@lambda-form-invoker [LF_RESOLVE] java.lang.invoke.DirectMethodHandle$Holder invokeStatic L7_L\n", string(got))
}

// The driver makes an archive only with its application's key and on a cluster without Kerberos;
// otherwise it says why, and the JobManager lists no classes for it.
func TestCDSSignerNeedsTheKeyAndNoKerberos(t *testing.T) {
	app := "application_1700000000000_0042"
	tokens := filepath.Join(t.TempDir(), "tokens")
	creds := yarnrpc.NewCredentials()
	creds.Secrets[secretCDSKey] = cdsAppKey(bytes.Repeat([]byte{1}, 32), app)
	require.NoError(t, creds.WriteFile(tokens))
	conf := t.TempDir()
	site := func(auth string) {
		require.NoError(t, os.WriteFile(filepath.Join(conf, "core-site.xml"), []byte(
			"<configuration><property><name>hadoop.security.authentication</name><value>"+auth+"</value></property></configuration>"), 0o600))
	}
	t.Setenv("HADOOP_TOKEN_FILE_LOCATION", tokens)
	t.Setenv("CONTAINER_ID", "container_1700000000000_0042_01_000001")
	t.Setenv("HADOOP_CONF_DIR", conf)
	t.Setenv("YARN_CONF_DIR", "")
	site("simple")
	got, key, err := cdsSigner()
	require.NoError(t, err)
	assert.Equal(t, app, got)
	assert.Len(t, key, 32)

	site("kerberos")
	_, _, err = cdsSigner()
	assert.ErrorContains(t, err, "a Kerberized cluster")

	site("simple")
	t.Setenv("HADOOP_TOKEN_FILE_LOCATION", "")
	_, _, err = cdsSigner()
	assert.ErrorContains(t, err, "HADOOP_TOKEN_FILE_LOCATION is not set")
}
