package flink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/jobfile"
)

// This file is [flink] java-home: a JDK shipped with the job for NodeManagers whose Java is older
// than the Flink version needs (docs/flink.md#a-jdk-for-the-containers). A JDK directory on the
// client is packed and staged as the Flink home is (packDir, the per-user staging cache); an hdfs://
// archive is localised as it is, as flink.provided is. The containers run its bin/java with
// JAVA_HOME there. Without java-home, a container whose java is too old for the Flink version stops
// at once and says so (checkJava).

// javaHomeAlias is the directory a [flink] java-home JDK is localised as, in the AM's and every
// TaskExecutor's working directory.
const javaHomeAlias = "jdk"

// javaHomeWant is what [flink] java-home takes, for messages.
const javaHomeWant = "want a JDK directory on this machine (with bin/java and a release file naming JAVA_VERSION, as JDKs since 9 and most 8s have) or the hdfs:// URI of an archive of one (.tar, .tar.gz, .tgz, .zip)"

// javaHomePacking packs a whole JDK, links followed: a distribution's JDK links its cacerts and
// configuration into /etc, and its docs and src.zip to files that may not be installed.
var javaHomePacking = packing{key: "flink.java-home", noun: "the JDK", prefix: "java-home-", follow: true}

// javaHomeArchive packs the JDK dir into an uncompressed tar in cacheDir, once per content, as
// HomeArchive packs a Flink home, and returns its path.
func javaHomeArchive(dir, cacheDir string, out io.Writer) (string, error) {
	return packDir(javaHomePacking, dir, cacheDir, out)
}

// readJavaHome reads [flink] java-home into f: a local JDK (made absolute, checked: inspectJDK) or
// an hdfs:// archive of one (checked as flink.provided is).
func readJavaHome(t *jobfile.Table, f *flinkSpec) {
	v, set := t.String("java-home")
	if !set {
		return
	}
	switch {
	case strings.TrimSpace(v) == "":
		t.Problem("flink.java-home = %q: %s; or leave java-home out to run the containers' own java", bounded(v), javaHomeWant)
	case strings.Contains(v, "://"):
		if !strings.HasPrefix(v, "hdfs://") || !jobfile.HasArchiveSuffix(v) || strings.HasSuffix(v, ".jar") {
			t.Problem("flink.java-home = %q: %s, e.g. \"hdfs:///jdk/jdk-17.tar.gz\"", bounded(v), javaHomeWant)
		} else if err := jobfile.CheckRemoteURI(v); err != nil {
			t.Problem("flink.java-home: %v", err)
		} else {
			f.JavaProvided = v
		}
	case t.Staged():
		f.JavaHome = v // localised as javaHomeAlias
	default:
		dir := jobfile.AbsAgainst(t.Dir(), expandTilde(v))
		if _, err := inspectJDK(dir); err != nil {
			t.Problem("flink.java-home = %q: %v; %s", bounded(v), err, javaHomeWant)
		}
		f.JavaHome = dir
	}
}

// inspectJDK checks that dir is a JDK a container can run: a directory with an executable
// bin/java and a release file naming JAVA_VERSION (read bounded), and returns that version.
func inspectJDK(dir string) (flinkdist.JavaVersion, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return flinkdist.JavaVersion{}, errors.New("no such directory")
	}
	if !st.IsDir() {
		return flinkdist.JavaVersion{}, errors.New("not a directory")
	}
	java := filepath.Join(dir, "bin", "java")
	st, err = os.Stat(java)
	switch {
	case err != nil:
		return flinkdist.JavaVersion{}, errors.New("it has no bin/java")
	case !st.Mode().IsRegular():
		return flinkdist.JavaVersion{}, errors.New("its bin/java is not a regular file")
	}
	if _, err := os.Stat(filepath.Join(dir, "release")); err != nil {
		return flinkdist.JavaVersion{}, errors.New("it has no release file (a JDK's names its JAVA_VERSION)")
	}
	v, err := flinkdist.ReadRelease(dir)
	if err != nil {
		return v, err
	}
	if st.Mode().Perm()&0o111 == 0 {
		return flinkdist.JavaVersion{}, fmt.Errorf("its bin/java is not executable (%s)", st.Mode().Perm())
	}
	return v, nil
}

// javaHomeWarning is the client's warning when java-home's JDK is older than the Flink home's
// version needs; "" when it is not, or either version is unknown. The containers refuse it
// (checkJava); the check only warns, as a version read from a release file may be wrong.
func javaHomeWarning(f *flinkSpec, home *flinkdist.Home) string {
	if f.JavaHome == "" || home == nil {
		return ""
	}
	need, ok := flinkdist.MinJava(home.Version)
	if !ok {
		return ""
	}
	v, err := inspectJDK(f.JavaHome)
	if err != nil || v.Major >= need {
		return ""
	}
	return fmt.Sprintf("flink.java-home = %q is %s; Flink %s needs Java %d or later: its JobManager and TaskManagers will refuse to start (docs/flink.md#a-jdk-for-the-containers)",
		bounded(f.JavaHome), v, home.Version, need)
}

// stageJavaHome adds java-home's JDK to the AM's and the TaskExecutors' archives as javaHomeAlias:
// packed once per content and staged through the per-user cache, or the hdfs:// archive as it is.
func stageJavaHome(job *jobfile.Job, f *flinkSpec, out io.Writer) error {
	src := f.JavaProvided
	if src == "" {
		if f.JavaHome == "" {
			return nil
		}
		var err error
		if src, err = javaHomeArchive(f.JavaHome, flinkArchiveCache(), out); err != nil {
			return err
		}
	}
	spec := jobfile.FileSpec{Source: src, Alias: javaHomeAlias}
	job.AM.Archives = append(job.AM.Archives, spec)
	job.TaskExecutor.Archives = append(job.TaskExecutor.Archives, spec)
	return nil
}

// localJavaHome is the localised JDK of java-home in the container's directory dir: ./jdk when
// bin/java is at the archive's top, else the one directory in it that has bin/java (a JDK's tarball
// holds jdk-17.0.15+6/). "" when java-home is not set.
func localJavaHome(dir string, f *flinkSpec) (string, error) {
	if f.JavaHome == "" && f.JavaProvided == "" {
		return "", nil
	}
	root := filepath.Join(dir, javaHomeAlias)
	if _, err := os.Stat(filepath.Join(root, "bin", "java")); err == nil {
		return root, nil
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return "", fmt.Errorf("flink.java-home: the localised JDK %s: %w", root, err)
	}
	var found []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(root, e.Name(), "bin", "java")); err == nil {
			found = append(found, filepath.Join(root, e.Name()))
		}
	}
	if len(found) != 1 {
		return "", fmt.Errorf("flink.java-home: the localised JDK %s has no bin/java at its top nor in exactly one directory (found %d); an archive of a JDK holds bin/java at its top or under one directory", root, len(found))
	}
	return found[0], nil
}

// checkJava is what a Flink process checks before its JVM starts: that the java it will run is
// at least the Java the Flink version needs (flinkdist.MinJava), so an old NodeManager's Java fails at
// once with the versions and the key to set rather than a Java stack trace
// (TestFlinkJavaHomeTooOldFailsAtOnce). A version that cannot be read is let through (the JVM
// then speaks for itself); a java that is not there is refused.
func checkJava(ctx context.Context, spec *flinkSpec, flinkVersion string, s flinkdist.Spec) (note string, err error) {
	java := s.JavaBinary()
	v, path, derr := flinkdist.DetectJava(ctx, java)
	if derr != nil {
		var ee *exec.Error
		if errors.As(derr, &ee) || errors.Is(derr, fs.ErrNotExist) || errors.Is(derr, fs.ErrPermission) {
			if s.JavaHome != "" {
				return "", fmt.Errorf("flink.java-home: the JDK's java %s does not run: %v", java, derr)
			}
			return "", fmt.Errorf("no java to run Flink %s: %v; set [flink] java-home to a JDK (docs/flink.md#a-jdk-for-the-containers)", flinkVersion, derr)
		}
		return fmt.Sprintf("the version of %s is unknown (%v); starting it anyway", java, derr), nil
	}
	need, ok := flinkdist.MinJava(flinkVersion)
	if !ok || v.Major >= need {
		return fmt.Sprintf("java %s is %s", path, v), nil
	}
	if s.JavaHome != "" {
		return "", fmt.Errorf("the JDK of [flink] java-home (%q) is %s, but Flink %s needs Java %d or later: set [flink] java-home to a JDK %d or later (docs/flink.md#a-jdk-for-the-containers)",
			shownPath(spec), v, flinkVersion, need, need)
	}
	return "", fmt.Errorf("this container's java %s is %s, but Flink %s needs Java %d or later: set [flink] java-home to a JDK %d or later, a directory on the client (shipped with the job) or the hdfs:// URI of an archive of one (docs/flink.md#a-jdk-for-the-containers)",
		path, v, flinkVersion, need, need)
}

// shownPath is java-home as the job file gave it.
func shownPath(f *flinkSpec) string {
	if f.JavaProvided != "" {
		return bounded(f.JavaProvided)
	}
	return bounded(f.JavaHome)
}
