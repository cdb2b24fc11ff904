package flinkdist

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What `java -version` prints for Java 8, 11, 17 and 21 (first lines, as OpenJDK and Oracle builds
// word them), and the major version each is.
func TestParseVersionOutput(t *testing.T) {
	for _, tc := range []struct {
		out  string
		text string
		want int
	}{
		{"openjdk version \"1.8.0_402\"\nOpenJDK Runtime Environment (Temurin)(build 1.8.0_402-b06)\n", "1.8.0_402", 8},
		{"java version \"1.8.0_202\"\nJava(TM) SE Runtime Environment (build 1.8.0_202-b08)\n", "1.8.0_202", 8},
		{"Picked up JAVA_TOOL_OPTIONS: -Xss1m\nopenjdk version \"11.0.22\" 2024-01-16\n", "11.0.22", 11},
		{"openjdk version \"17.0.15\" 2025-04-15\nOpenJDK 64-Bit Server VM (build 17.0.15+6-Debian-1deb12u1, mixed mode, sharing)\n", "17.0.15", 17},
		{"java version \"21\" 2023-09-19 LTS\n", "21", 21},
		{"openjdk version \"21-ea\" 2023-09-19\n", "21-ea", 21},
	} {
		text, err := parseVersionOutput(tc.out)
		require.NoError(t, err, tc.out)
		assert.Equal(t, tc.text, text)
		major, err := parseJavaMajor(text)
		require.NoError(t, err)
		assert.Equal(t, tc.want, major, text)
	}
	_, err := parseVersionOutput("Error: could not create the Java Virtual Machine.\n")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no version line")
}

func TestParseJavaMajor(t *testing.T) {
	for v, want := range map[string]int{"1.7.0": 7, "1.8.0_402": 8, "9": 9, "11.0.22": 11, "17.0.2+8": 17, "21.0.2": 21, "25": 25} {
		got, err := parseJavaMajor(v)
		require.NoError(t, err, v)
		assert.Equal(t, want, got, v)
	}
	for _, bad := range []string{"", "openjdk", "1.", "x17"} {
		_, err := parseJavaMajor(bad)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "want a version such as")
	}
}

func TestParseRelease(t *testing.T) {
	v, err := parseRelease([]byte("IMPLEMENTOR=\"Debian\"\nJAVA_RUNTIME_VERSION=\"17.0.15+6\"\nJAVA_VERSION=\"17.0.15\"\n"))
	require.NoError(t, err)
	assert.Equal(t, "17.0.15", v, "JAVA_VERSION, not JAVA_RUNTIME_VERSION")
	v, err = parseRelease([]byte("JAVA_VERSION=\"1.8.0_402\"\r\nOS_NAME=\"Linux\"\n"))
	require.NoError(t, err)
	assert.Equal(t, "1.8.0_402", v)
	_, err = parseRelease([]byte("IMPLEMENTOR=\"x\"\n"))
	assert.ErrorIs(t, err, errNoJavaVersion)
	_, err = parseRelease([]byte("JAVA_VERSION=\"\"\n"))
	assert.Error(t, err)
}

// Flink 1.x runs on Java 8 and later, 2.x on 11 and later (it dropped Java 8).
func TestMinJava(t *testing.T) {
	for v, want := range map[string]int{"1.20.5": 8, "1.17.2": 8, "2.0.0": 11, "2.1.2": 11, "2.2-SNAPSHOT": 11} {
		got, ok := MinJava(v)
		require.True(t, ok, v)
		assert.Equal(t, want, got, v)
	}
	for _, bad := range []string{"", "x.y", "0.9"} {
		_, ok := MinJava(bad)
		assert.False(t, ok, bad)
	}
}

// A release file too large is refused naming it and the limit, not read whole.
func TestReadReleaseIsBounded(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "release"), []byte(strings.Repeat("# x\n", maxReleaseBytes)), 0o644))
	_, err := ReadRelease(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "larger than 64 KiB")
}

// DetectJava reads the release file beside bin/java through its links, and runs java -version only
// where there is none.
func TestDetectJava(t *testing.T) {
	jdk := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(jdk, "bin"), 0o755))
	// A java that would say another version: the release file wins, so it never runs.
	require.NoError(t, os.WriteFile(filepath.Join(jdk, "bin", "java"), []byte("#!/bin/sh\necho 'openjdk version \"99\"' >&2\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(jdk, "release"), []byte("JAVA_VERSION=\"11.0.22\"\n"), 0o644))
	links := t.TempDir()
	require.NoError(t, os.Symlink(filepath.Join(jdk, "bin", "java"), filepath.Join(links, "java")))
	t.Setenv("PATH", links+string(os.PathListSeparator)+os.Getenv("PATH"))
	v, path, err := DetectJava(context.Background(), "java")
	require.NoError(t, err)
	assert.Equal(t, 11, v.Major)
	assert.Equal(t, filepath.Join(jdk, "release"), v.From)
	assert.Equal(t, filepath.Join(links, "java"), path)

	require.NoError(t, os.Remove(filepath.Join(jdk, "release")))
	v, _, err = DetectJava(context.Background(), "java")
	require.NoError(t, err)
	assert.Equal(t, 99, v.Major)
	assert.Contains(t, v.From, "-version")

	_, _, err = DetectJava(context.Background(), filepath.Join(jdk, "no-java"))
	require.Error(t, err)
}
