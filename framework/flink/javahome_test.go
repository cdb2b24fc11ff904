package flink

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/jobfile"
)

// fakeJDK writes a JDK whose bin/java prints version and whose release file says release (none when
// "") into dir.
func fakeJDK(t *testing.T, dir, version, release string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "bin"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bin", "java"),
		[]byte("#!/bin/sh\necho 'openjdk version \""+version+"\"' >&2\n"), 0o755))
	if release != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "release"), []byte(release), 0o644))
	}
	return dir
}

func TestFlinkJavaHomeProblems(t *testing.T) {
	for _, tc := range []struct {
		body  string
		setup func(dir string)
		want  string
	}{
		{body: `java-home = "nojdk"`, want: `flink.java-home = "nojdk": no such directory; want a JDK directory`},
		{body: `java-home = "job.jar"`, want: `flink.java-home = "job.jar": not a directory`},
		{body: `java-home = "jdk"`, setup: func(d string) { require.NoError(t, os.MkdirAll(filepath.Join(d, "jdk"), 0o755)) }, want: "it has no bin/java"},
		{body: `java-home = "jdk"`, setup: func(d string) {
			fakeJDK(t, filepath.Join(d, "jdk"), "17", "JAVA_VERSION=\"17\"\n")
			require.NoError(t, os.Chmod(filepath.Join(d, "jdk", "bin", "java"), 0o644))
		}, want: "its bin/java is not executable (-rw-r--r--)"},
		{body: `java-home = "jdk"`, setup: func(d string) { fakeJDK(t, filepath.Join(d, "jdk"), "17", "") }, want: "it has no release file"},
		{body: `java-home = "jdk"`, setup: func(d string) { fakeJDK(t, filepath.Join(d, "jdk"), "17", "OS_NAME=\"Linux\"\n") }, want: "release: no JAVA_VERSION line"},
		{body: `java-home = "jdk"`, setup: func(d string) { fakeJDK(t, filepath.Join(d, "jdk"), "17", "JAVA_VERSION=\"seventeen\"\n") }, want: `Java version "seventeen": want a version such as`},
		{body: `java-home = ""`, want: `flink.java-home = "": want a JDK directory`},
		{body: `java-home = "s3://b/jdk.tar.gz"`, want: `flink.java-home = "s3://b/jdk.tar.gz": want a JDK directory on this machine`},
		{body: `java-home = "hdfs:///jdk/jdk-17"`, want: `e.g. "hdfs:///jdk/jdk-17.tar.gz"`},
		{body: `java-home = 17`, want: "flink.java-home = 17: want a string"},
	} {
		p := writeJob(t, "[flink]\nhome = \"flink\"\n"+tc.body+"\n")
		fakeFlinkHome(t, filepath.Dir(p))
		if tc.setup != nil {
			tc.setup(filepath.Dir(p))
		}
		_, err := jobfile.LoadJob(p)
		var je *jobfile.JobError
		require.True(t, errors.As(err, &je), "%q: %v", tc.body, err)
		assert.Contains(t, err.Error(), tc.want, tc.body)
	}
}

func TestFlinkJavaHomeIsRead(t *testing.T) {
	p := writeJob(t, "[flink]\nhome = \"flink\"\njava-home = \"jdk\"\n")
	dir := filepath.Dir(p)
	fakeFlinkHome(t, dir)
	fakeJDK(t, filepath.Join(dir, "jdk"), "17.0.15", "JAVA_VERSION=\"17.0.15\"\n")
	j, err := jobfile.LoadJob(p)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "jdk"), specOf(j).JavaHome, "made absolute against the job file")

	p = writeJob(t, "[flink]\nhome = \"flink\"\njava-home = \"hdfs:///jdk/jdk-17.tar.gz\"\n")
	fakeFlinkHome(t, filepath.Dir(p))
	j, err = jobfile.LoadJob(p)
	require.NoError(t, err)
	assert.Equal(t, "hdfs:///jdk/jdk-17.tar.gz", specOf(j).JavaProvided)
	assert.Empty(t, specOf(j).JavaHome)
}

// A JDK is packed whole, links followed and links to what is not installed left out, once per
// content; stage ships it to the AM and every TaskExecutor as ./jdk.
func TestJavaHomeIsPackedOncePerContentAndStaged(t *testing.T) {
	t.Setenv("YARN_AM_CACHE", t.TempDir())
	jdk := fakeJDK(t, t.TempDir(), "17", "JAVA_VERSION=\"17.0.15\"\n")
	etc := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(etc, "cacerts"), []byte("certs"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(jdk, "lib", "security"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(etc, "cacerts"), filepath.Join(jdk, "lib", "security", "cacerts")))
	require.NoError(t, os.Symlink(filepath.Join(etc, "missing-src.zip"), filepath.Join(jdk, "lib", "src.zip")))
	require.NoError(t, os.Symlink(etc, filepath.Join(jdk, "conf")))

	job := &jobfile.Job{Framework: &jobfile.FrameworkPart{Name: frameworkName, Spec: &flinkSpec{Provided: "hdfs:///flink/flink.tar", JavaHome: jdk}}}
	var out bytes.Buffer
	require.NoError(t, stage(job, &out))
	assert.Contains(t, out.String(), "packing the JDK "+jdk)
	require.Len(t, job.AM.Archives, 2)
	a := job.AM.Archives[1]
	assert.Equal(t, javaHomeAlias, a.Alias)
	assert.Equal(t, job.AM.Archives, job.TaskExecutor.Archives)
	assert.True(t, strings.HasPrefix(filepath.Base(a.Source), "java-home-"), a.Source)

	f, err := os.Open(a.Source)
	require.NoError(t, err)
	defer f.Close()
	files := map[string]string{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if h.Typeflag == tar.TypeReg {
			b, _ := io.ReadAll(tr)
			files[h.Name] = string(b)
			if h.Name == "bin/java" {
				assert.NotZero(t, h.Mode&0o111, "bin/java stays executable")
			}
		}
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	assert.Equal(t, []string{"bin/java", "conf/cacerts", "lib/security/cacerts", "release"}, names)
	assert.Equal(t, "certs", files["lib/security/cacerts"], "a link is packed as what it points to")

	// The second submit of the same JDK reuses the archive: nothing is packed.
	out.Reset()
	job2 := &jobfile.Job{Framework: &jobfile.FrameworkPart{Name: frameworkName, Spec: &flinkSpec{Provided: "hdfs:///flink/flink.tar", JavaHome: jdk}}}
	require.NoError(t, stage(job2, &out))
	assert.Empty(t, out.String())
	assert.Equal(t, a.Source, job2.AM.Archives[1].Source)

	// An hdfs:// JDK is localised as it is.
	job3 := &jobfile.Job{Framework: &jobfile.FrameworkPart{Name: frameworkName, Spec: &flinkSpec{Provided: "hdfs:///flink/flink.tar", JavaProvided: "hdfs:///jdk/jdk.tgz"}}}
	require.NoError(t, stage(job3, io.Discard))
	assert.Equal(t, jobfile.FileSpec{Source: "hdfs:///jdk/jdk.tgz", Alias: javaHomeAlias}, job3.TaskExecutor.Archives[1])

	// The alias is the JDK's.
	job4 := &jobfile.Job{Framework: &jobfile.FrameworkPart{Name: frameworkName, Spec: &flinkSpec{Provided: "hdfs:///flink/flink.tar", JavaProvided: "hdfs:///jdk/jdk.tgz"}}}
	job4.AM.Files = []jobfile.FileSpec{{Source: "/x/jdk", Alias: javaHomeAlias}}
	err = stage(job4, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `the alias "jdk" of /x/jdk is taken`)
}

// A link loop in a JDK is refused naming it, not followed for ever.
func TestJavaHomeLinkLoopIsRefused(t *testing.T) {
	jdk := fakeJDK(t, t.TempDir(), "17", "JAVA_VERSION=\"17\"\n")
	require.NoError(t, os.Symlink(jdk, filepath.Join(jdk, "bin", "up")))
	_, err := javaHomeArchive(jdk, t.TempDir(), io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a loop of symbolic links")
}

func TestLocalJavaHome(t *testing.T) {
	dir := t.TempDir()
	got, err := localJavaHome(dir, &flinkSpec{})
	require.NoError(t, err)
	assert.Empty(t, got, "no java-home: the container's java")

	fakeJDK(t, filepath.Join(dir, javaHomeAlias), "17", "")
	got, err = localJavaHome(dir, &flinkSpec{JavaHome: "/client/jdk"})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, javaHomeAlias), got)

	// A JDK tarball holds one directory.
	dir = t.TempDir()
	fakeJDK(t, filepath.Join(dir, javaHomeAlias, "jdk-17.0.15+6"), "17", "")
	got, err = localJavaHome(dir, &flinkSpec{JavaProvided: "hdfs:///jdk.tgz"})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, javaHomeAlias, "jdk-17.0.15+6"), got)

	dir = t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, javaHomeAlias, "empty"), 0o755))
	_, err = localJavaHome(dir, &flinkSpec{JavaProvided: "hdfs:///jdk.tgz"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "has no bin/java at its top nor in exactly one directory")
}

// A java older than the Flink version needs stops the process at once, naming the version found,
// where it was read, the version needed and the key to set.
func TestCheckJava(t *testing.T) {
	old := fakeJDK(t, t.TempDir(), "1.7.0_80", "JAVA_VERSION=\"1.7.0\"\n")
	_, err := checkJava(context.Background(), &flinkSpec{JavaHome: "/client/old-jdk"}, "1.20.5", flinkdist.Spec{JavaHome: old})
	require.Error(t, err)
	for _, want := range []string{`[flink] java-home ("/client/old-jdk")`, `Java 7 ("1.7.0", from ` + filepath.Join(old, "release"), "Flink 1.20.5 needs Java 8 or later"} {
		assert.Contains(t, err.Error(), want)
	}

	// Without java-home: the container's java, found on the PATH; its version from java -version.
	j11 := fakeJDK(t, t.TempDir(), "11.0.22", "")
	t.Setenv("JAVA_HOME", "")
	t.Setenv("PATH", filepath.Join(j11, "bin"))
	_, err = checkJava(context.Background(), &flinkSpec{}, "2.0.0", flinkdist.Spec{})
	require.NoError(t, err, "Flink 2 runs on 11")
	note, err := checkJava(context.Background(), &flinkSpec{}, "1.20.5", flinkdist.Spec{})
	require.NoError(t, err)
	assert.Contains(t, note, "Java 11")
	j8 := fakeJDK(t, t.TempDir(), "1.8.0_402", "")
	t.Setenv("PATH", filepath.Join(j8, "bin"))
	_, err = checkJava(context.Background(), &flinkSpec{}, "2.0.0", flinkdist.Spec{})
	require.Error(t, err)
	for _, want := range []string{filepath.Join(j8, "bin", "java"), `Java 8 ("1.8.0_402"`, "Flink 2.0.0 needs Java 11 or later", "set [flink] java-home to a JDK 11 or later"} {
		assert.Contains(t, err.Error(), want)
	}

	t.Setenv("PATH", t.TempDir())
	_, err = checkJava(context.Background(), &flinkSpec{}, "1.20.5", flinkdist.Spec{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no java to run Flink 1.20.5")
	assert.Contains(t, err.Error(), "[flink] java-home")
}

// check warns when java-home's JDK is older than the home's Flink needs.
func TestCheckWarnsOfAnOldJavaHome(t *testing.T) {
	t.Setenv("YARN_AM_CACHE", t.TempDir())
	p := writeJob(t, strings.Replace(checkJob, `home = "flink"`, "home = \"flink\"\njava-home = \"jdk\"", 1))
	dir := filepath.Dir(p)
	checkHome(t, dir, "", "")
	fakeJDK(t, filepath.Join(dir, "jdk"), "1.7.0", "JAVA_VERSION=\"1.7.0\"\n")
	lj, err := client.LoadJob(p, client.JobOptions{})
	require.NoError(t, err)
	var all []string
	for _, w := range lj.Warnings {
		all = append(all, w.Message)
	}
	assert.Contains(t, strings.Join(all, "\n"), `flink.java-home = "`+filepath.Join(dir, "jdk")+`" is Java 7 ("1.7.0", from `)
	assert.Contains(t, strings.Join(all, "\n"), "Flink 1.20.5 needs Java 8 or later")

	fakeJDK(t, filepath.Join(dir, "jdk"), "17", "JAVA_VERSION=\"17.0.15\"\n")
	lj, err = client.LoadJob(p, client.JobOptions{})
	require.NoError(t, err)
	for _, w := range lj.Warnings {
		assert.NotContains(t, w.Message, "java-home")
	}
}
