//go:build integration

package yarnrpc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// jdkTool is the JDK's tool of that name: JAVA_HOME's, else the one on PATH.
func jdkTool(name string) string {
	if h := os.Getenv("JAVA_HOME"); h != "" {
		return filepath.Join(h, "bin", name)
	}
	return name
}

// compileJDKServer compiles one of testdata's Java test servers into a directory of the test, for
// each of its subtests' JVMs to run: `java File.java` compiled the source again in every JVM, 2.4 s
// of CPU each (of 3.4 s until the GSSAPI server's READY), which the 15 JVMs of the JDK tests paid beside
// the am package's Flink tests in make test. It returns the classpath to run the class with.
func compileJDKServer(t *testing.T, src string, cp []string) string {
	t.Helper()
	dir := t.TempDir()
	args := []string{"-d", dir}
	if len(cp) > 0 {
		args = append(args, "-cp", strings.Join(cp, ":"))
	}
	out, err := exec.Command(jdkTool("javac"), append(args, src)...).CombinedOutput()
	require.NoError(t, err, "the JDK is needed (JAVA_HOME or javac on PATH): javac %s: %s", src, out)
	return strings.Join(append([]string{dir}, cp...), ":")
}
