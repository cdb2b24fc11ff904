package flinkdist

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/internal/boundedread"
)

// This file answers "is this java new enough for this Flink?" (docs/flink.md#a-jdk-for-the-containers):
// the Java a Flink version needs, and the version of a JDK, read from its release file or, without
// one, from `java -version`.

// maxReleaseBytes bounds a JDK's release file (a real one is about 1 KiB).
const maxReleaseBytes = 64 << 10

// javaVersionTimeout bounds `java -version`, which a JVM answers in well under a second.
const javaVersionTimeout = 20 * time.Second

// MinJava is the oldest Java major version the Flink version runs on: Java 8 for Flink 1.x (8
// deprecated since 1.15, 11 and 17 supported), Java 11 for Flink 2.x, which dropped Java 8
// (Flink 2.0's release notes). ok is false when version is not one of Flink's ("" or unreadable).
func MinJava(flinkVersion string) (major int, ok bool) {
	first, _, _ := strings.Cut(strings.TrimSpace(flinkVersion), ".")
	n, err := strconv.Atoi(first)
	switch {
	case err != nil || n < 1:
		return 0, false
	case n == 1:
		return 8, true
	default:
		return 11, true
	}
}

// JavaVersion is a JDK's version as it names itself.
type JavaVersion struct {
	Text  string // as written: "1.8.0_402", "17.0.15"
	Major int    // 8, 17
	From  string // where it was read: the release file's path, or "<java> -version"
}

func (v JavaVersion) String() string {
	return fmt.Sprintf("Java %d (%q, from %s)", v.Major, v.Text, v.From)
}

// parseJavaMajor reads the major version of a Java version string: "1.8.0_402" and "1.7.0" are 8
// and 7 (the old 1.x scheme), "11.0.22", "17", "21-ea" and "17.0.2+8" are 11, 17, 21 and 17.
func parseJavaMajor(v string) (int, error) {
	s := strings.TrimSpace(v)
	if rest, ok := strings.CutPrefix(s, "1."); ok {
		s = rest
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, err := strconv.Atoi(s[:i])
	if i == 0 || err != nil || n < 1 || n > 999 {
		return 0, fmt.Errorf("Java version %s: want a version such as \"1.8.0_402\", \"11.0.22\" or \"17.0.15\"", shown(v))
	}
	return n, nil
}

// errNoJavaVersion says a release file has no JAVA_VERSION line.
var errNoJavaVersion = errors.New("no JAVA_VERSION line")

// parseRelease reads JAVA_VERSION from the content of a JDK's release file (KEY="value" lines).
func parseRelease(data []byte) (string, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxReleaseBytes)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok || strings.TrimSpace(k) != "JAVA_VERSION" {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"`)
		if v == "" {
			return "", fmt.Errorf("an empty JAVA_VERSION")
		}
		return v, nil
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", errNoJavaVersion
}

// ReadRelease reads the version in jdk/release, bounded.
func ReadRelease(jdk string) (JavaVersion, error) {
	p := filepath.Join(jdk, "release")
	data, err := boundedread.ReadFile("the JDK's release file", p, "a JDK's release file", maxReleaseBytes)
	if err != nil {
		return JavaVersion{}, err
	}
	text, err := parseRelease(data)
	if err != nil {
		return JavaVersion{}, fmt.Errorf("%s: %w", p, err)
	}
	major, err := parseJavaMajor(text)
	if err != nil {
		return JavaVersion{}, fmt.Errorf("%s: %w", p, err)
	}
	return JavaVersion{Text: text, Major: major, From: p}, nil
}

// parseVersionOutput reads the version from what `java -version` prints: the first line that
// names one in quotes, `openjdk version "11.0.22" 2024-01-16` or `java version "1.8.0_402"`.
func parseVersionOutput(out string) (string, error) {
	for _, line := range strings.Split(out, "\n") {
		_, rest, ok := strings.Cut(line, " version \"")
		if !ok {
			continue
		}
		if v, _, ok := strings.Cut(rest, "\""); ok && v != "" {
			return v, nil
		}
	}
	return "", fmt.Errorf("no version line (like `openjdk version \"17.0.15\"`) in its output: %s", shown(tail(out, 200)))
}

// DetectJava finds the version of java (a path, or a name looked up on the PATH): from the release
// file of the JDK it belongs to (bin/java's symbolic links resolved, the release file next to bin/),
// which costs no JVM, else from `java -version`, with a timeout and its output bounded. It also
// returns the resolved binary.
func DetectJava(ctx context.Context, java string) (JavaVersion, string, error) {
	path, err := exec.LookPath(java)
	if err != nil {
		return JavaVersion{}, java, err
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		if v, err := ReadRelease(filepath.Dir(filepath.Dir(real))); err == nil {
			return v, path, nil
		}
	}
	ctx, cancel := context.WithTimeout(ctx, javaVersionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "-version")
	var out limitedBuffer
	out.max = 16 << 10
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second // a child holding the pipes open does not hold us
	if err := cmd.Run(); err != nil {
		return JavaVersion{}, path, fmt.Errorf("%s -version: %w; its output ends: %s", path, err, shown(tail(out.String(), 200)))
	}
	text, err := parseVersionOutput(out.String())
	if err != nil {
		return JavaVersion{}, path, fmt.Errorf("%s -version: %w", path, err)
	}
	major, err := parseJavaMajor(text)
	if err != nil {
		return JavaVersion{}, path, fmt.Errorf("%s -version: %w", path, err)
	}
	return JavaVersion{Text: text, Major: major, From: path + " -version"}, path, nil
}
