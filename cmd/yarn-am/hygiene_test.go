package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLaunchWarnsOfAnUnknownLogLevel: a worker is not stopped for its log level, but the launcher says
// which value it ignored, the valid ones, and the level in effect.
func TestLaunchWarnsOfAnUnknownLogLevel(t *testing.T) {
	t.Chdir(t.TempDir()) // launch writes external-resources.json here
	t.Setenv("YARN_AM_LOG_LEVEL", "loud")
	stdout, stderr := &lockedBuffer{}, &lockedBuffer{} // the worker's output is copied by other goroutines
	code := run([]string{"launch", "-D", "external-resources=none", "--", "true"}, stdout, stderr)
	if code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, stderr.String())
	}
	for _, w := range []string{"warning", `"loud"`, "debug, info, warn, error", "logging at info"} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
		}
	}
}

// TestMessagesAreBounded: a 1 MiB value in the job file, -D or a flink-conf is echoed as a bounded
// prefix with its length, never whole.
func TestMessagesAreBounded(t *testing.T) {
	big := strings.Repeat("9", 1<<20)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gpu := "external-resources = \"gpu\"\nexternal-resource.gpu.yarn.config-key = \"yarn.io/gpu\"\n[taskexecutor]\ncommand = \"./w\"\n"
	bigAmount := write("big.toml", "external-resource.gpu.amount = \""+big[:1<<19]+"\"\n"+gpu)
	small := write("job.toml", gpu)
	ok := write("ok.toml", "external-resource.gpu.amount = 1\n"+gpu)
	fc := write("flink-conf.yaml", "external-resource.gpu.amount: "+big[:1<<19]+"\n")
	bigMem := write("mem.toml", "[taskexecutor]\ncommand = \"./w\"\nmemory = \""+big[:1<<19]+"\"\n")
	bigKey := write("key.toml", "\""+big[:1<<19]+"\" = 1\n[taskexecutor]\ncommand = \"./w\"\n")
	for name, args := range map[string][]string{
		"job amount":      {"check", bigAmount},
		"-D amount":       {"check", small, "-D", "external-resource.gpu.amount=" + big},
		"-D key":          {"check", small, "-D", big + "=1"},
		"flink-conf":      {"check", small, "--flink-conf", fc},
		"job memory":      {"check", bigMem},
		"job unknown key": {"check", bigKey},
		"--queue":         {"check", ok, "--queue", big + " x"},
		"--name":          {"check", ok, "--name", big},
		"-D bad key":      {"check", ok, "-D", big + "=1"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(args, &stdout, &stderr)
		if code == 0 || stderr.Len() > 4096 || !strings.Contains(stderr.String(), "bytes)") {
			t.Errorf("%s: exit %d, %d bytes of message, want a failure with a bounded value and its length: %.600s", name, code, stderr.Len(), stderr.String())
		}
	}
}
