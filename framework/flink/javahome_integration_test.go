//go:build integration

package flink_test

// [flink] java-home on the mini cluster (docs/flink.md#a-jdk-for-the-containers): the JobManager and
// the TaskManagers run the JDK the job ships, and a JDK too old for the Flink version fails the
// application at once with the versions and the key in its diagnostics.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	flink "github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/testkit/e2e"
)

// flinkJLinkModules are the modules of the trimmed runtime Flink 1.20.5's JobManager and
// TaskManager run on (found by running them: TestFlinkJavaHomeRunsTheShippedJDK).
var flinkJLinkModules = []string{
	"java.base", "java.compiler", "java.desktop", "java.instrument", "java.logging", "java.management",
	"java.management.rmi", "java.naming", "java.net.http", "java.rmi", "java.scripting", "java.security.jgss", "java.security.sasl",
	"java.sql", "java.xml", "jdk.crypto.ec", "jdk.management", "jdk.security.auth", "jdk.security.jgss", "jdk.unsupported", "jdk.zipfs",
}

// trimmedJDK is a runtime of this machine's JDK with flinkJLinkModules only (jlink), so the JDK a
// test ships is tens of MB rather than hundreds. It is built once per JDK and module list, beside
// make flink-dist's Flink home.
func trimmedJDK(t *testing.T) string {
	t.Helper()
	jlink, err := exec.LookPath("jlink")
	require.NoError(t, err, "jlink (a JDK's) builds the trimmed runtime these tests ship")
	real, err := filepath.EvalSymlinks(jlink)
	require.NoError(t, err)
	home, _ := flinkInputs(t)
	h := sha256.Sum256([]byte(real + "\x00" + strings.Join(flinkJLinkModules, ",")))
	dir := filepath.Join(filepath.Dir(home), "jdk-flink-"+hex.EncodeToString(h[:])[:12])
	if _, err := os.Stat(filepath.Join(dir, "release")); err == nil {
		return dir
	}
	tmp := dir + ".tmp"
	require.NoError(t, os.RemoveAll(tmp))
	out, err := exec.Command(jlink, "--add-modules", strings.Join(flinkJLinkModules, ","), "--strip-debug",
		"--no-man-pages", "--no-header-files", "--compress=2", "--output", tmp).CombinedOutput()
	require.NoError(t, err, "jlink: %s", out)
	require.NoError(t, os.Rename(tmp, dir))
	return dir
}

// javaHomeLine is what -XshowSettings:properties prints of the running JVM's java.home.
var javaHomeLine = regexp.MustCompile(`(?m)^\s*java\.home = (\S+)\s*$`)

// appFiles returns, per container of the application, the concatenation of its log files named by
// glob (e.g. "*.err", "stderr").
func appFiles(id string, globs ...string) map[string]string {
	out := map[string]string{}
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
		for _, g := range globs {
			files, _ := filepath.Glob(filepath.Join(d, id, "*", g))
			for _, f := range files {
				data, _ := os.ReadFile(f)
				out[filepath.Base(filepath.Dir(f))] += string(data)
			}
		}
	}
	return out
}

// TestFlinkJavaHomeRunsTheShippedJDK: a job with java-home = a trimmed JDK runs the gpu test job to
// FINISHED, and the JobManager's and the TaskManager's JVMs report as their java.home the JDK
// localised from the job's archive (java-home-<sha>.tar), not the node's. On each tested Flink line,
// with one trimmed JDK 17 for both.
func TestFlinkJavaHomeRunsTheShippedJDK(t *testing.T) {
	e2e.Env(t)
	jdk := trimmedJDK(t)
	eachFlinkAtOnce(t, func(t *testing.T, v flinkVersion) { testFlinkJavaHomeRunsTheShippedJDK(t, v, jdk) })
}

func testFlinkJavaHomeRunsTheShippedJDK(t *testing.T, v flinkVersion, jdk string) {
	job := flinkJobOf(t, v, "flink-java-home", 1, 1, []string{"gpu", "1"}, `"env.java.opts.all" = "-XshowSettings:properties"`)
	body, err := os.ReadFile(job)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(job, []byte(strings.Replace(string(body), "[flink]\n", "[flink]\njava-home = \""+jdk+"\"\n", 1)), 0o644))
	start := time.Now()
	r := e2e.YarnAM(t, 6*time.Minute, "submit", job)
	id := e2e.SubmittedID(r.Stdout)
	require.Equal(t, 0, r.Code, "the job runs on the shipped JDK:\n%s\n%s", r, e2e.ContainerLogs(id))
	t.Logf("measured: submit with java-home -> SUCCEEDED %s (load %s)", time.Since(start).Round(time.Second), loadAvgE2E())
	lines := tmLines(id, flinkGPULine)
	assert.Len(t, lines, 1, "the gpu job's subtask ran:\n%s", e2e.ContainerLogs(id))

	homes := map[string]string{}
	for c, text := range appFiles(id, "jobmanager.err", "taskmanager.err") {
		if m := javaHomeLine.FindStringSubmatch(text); m != nil {
			homes[c] = m[1]
		}
	}
	require.Len(t, homes, 2, "the JobManager's JVM (jobmanager.err of the AM container) and the TaskManager's (taskmanager.err) printed their java.home:\n%s", e2e.ContainerLogs(id))
	for c, h := range homes {
		assert.Regexp(t, `/java-home-[0-9a-f]{32}\.tar$`, h, "%s ran the JDK localised from the job's archive", c)
	}
	r = e2e.YarnAM(t, 6*time.Minute, "check", job)
	assert.NotContains(t, r.Stderr, "java-home", "a JDK 17 is new enough for Flink %s: no warning\n%s", flinkHomeVersion(t, v), r)
}

// TestFlinkJavaHomeTooOldFailsAtOnce: with java-home = a JDK whose release file says a Java one below
// the Flink version's (Java 7 for Flink 1.20's Java 8; Java 8, which Flink 2.0 dropped, for Flink 2's
// Java 11), check warns, and the application FAILS without starting a JVM, its diagnostics naming the
// version found, where it was read, the version needed and the key. The same JDK as the container's
// own java (JAVA_HOME, no java-home) fails the same way. On each tested Flink line.
func TestFlinkJavaHomeTooOldFailsAtOnce(t *testing.T) {
	e2e.Env(t)
	eachFlinkAtOnce(t, testFlinkJavaHomeTooOldFailsAtOnce)
}

func testFlinkJavaHomeTooOldFailsAtOnce(t *testing.T, v flinkVersion) {
	version := flinkHomeVersion(t, v)
	need, ok := flink.MinJava(version)
	require.True(t, ok, "the Java Flink %s needs", version)
	// The newest Java too old for this Flink, as its release file and java -version write it.
	old, oldFull, oldMajor := "1.7.0", "1.7.0_80", 7
	if need > 8 {
		old, oldFull, oldMajor = "1.8.0", "1.8.0_402", 8
	}
	jdk := filepath.Join(t.TempDir(), "jdk"+oldFull)
	require.NoError(t, os.MkdirAll(filepath.Join(jdk, "bin"), 0o755))
	// A JVM that ran would leave this file: none may run.
	ran := filepath.Join(t.TempDir(), "java-ran")
	require.NoError(t, os.WriteFile(filepath.Join(jdk, "bin", "java"),
		[]byte("#!/bin/sh\ntouch "+ran+"\necho 'java version \""+oldFull+"\"' >&2\nexit 1\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(jdk, "release"), []byte("JAVA_VERSION=\""+old+"\"\nOS_NAME=\"Linux\"\n"), 0o644))
	job := flinkJobOf(t, v, "flink-old-java", 1, 1, []string{"gpu", "1"}, "")
	body, err := os.ReadFile(job)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(job, []byte(strings.Replace(string(body), "[flink]\n", "[flink]\njava-home = \""+jdk+"\"\n", 1)), 0o644))
	isOld := fmt.Sprintf(`is Java %d (%q, from `, oldMajor, old)
	needs := fmt.Sprintf(`Flink %s needs Java %d or later`, version, need)
	setIt := fmt.Sprintf(`set [flink] java-home to a JDK %d or later`, need)

	r := e2e.YarnAM(t, time.Minute, "check", job)
	assert.Equal(t, 0, r.Code, "an old java-home is a warning at check time:\n%s", r)
	assert.Contains(t, r.Stderr, isOld+filepath.Join(jdk, "release")+`); `+needs, r.String())

	start := time.Now()
	r = e2e.YarnAM(t, 6*time.Minute, "submit", job)
	require.NotEqual(t, 0, r.Code, "the JobManager refuses the old JDK:\n%s", r)
	id := e2e.SubmittedID(r.Stdout)
	d := e2e.Status(t, id)
	t.Logf("measured: submit with a Java %d java-home -> FAILED %s (load %s)", oldMajor, time.Since(start).Round(time.Second), loadAvgE2E())
	assert.Equal(t, "FAILED", d.Report.FinalStatus)
	assert.Regexp(t, regexp.QuoteMeta(`the JDK of [flink] java-home ("`+jdk+`") `+isOld)+
		`\S*/java-home-[0-9a-f]{32}\.tar/release\), but `+regexp.QuoteMeta(needs+": "+setIt),
		d.Report.Diagnostics, "the release file of the JDK localised from the job's archive\n%s", e2e.ContainerLogs(id))
	assert.NotContains(t, d.Report.Diagnostics, "Exception", "no Java stack trace")
	assert.NoFileExists(t, ran, "no JVM was started")

	// Without java-home, the container's own java: here the same old Java as the AM container's
	// JAVA_HOME, as an old NodeManager's would be.
	require.NoError(t, os.WriteFile(job, append(body, []byte("\n[am.env]\nJAVA_HOME = \""+jdk+"\"\n")...), 0o644))
	r = e2e.YarnAM(t, 6*time.Minute, "submit", job)
	require.NotEqual(t, 0, r.Code, "the JobManager refuses the node's old java:\n%s", r)
	id = e2e.SubmittedID(r.Stdout)
	d = e2e.Status(t, id)
	assert.Equal(t, "FAILED", d.Report.FinalStatus)
	assert.Contains(t, d.Report.Diagnostics, `this container's java `+filepath.Join(jdk, "bin", "java")+` `+isOld+filepath.Join(jdk, "release")+
		`), but `+needs+`: `+setIt, "%s", e2e.ContainerLogs(id))
	assert.NoFileExists(t, ran, "no JVM was started")
}
