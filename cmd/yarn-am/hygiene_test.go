package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestLaunchWarnsOfAnUnknownLogLevel: a worker is not stopped for its log level, but the launcher says
// which value it ignored, the valid ones, and the level in effect.
func TestLaunchWarnsOfAnUnknownLogLevel(t *testing.T) {
	t.Chdir(t.TempDir()) // launch writes external-resources.json here
	t.Setenv("YARN_AM_LOG_LEVEL", "loud")
	var stdout, stderr bytes.Buffer
	code := run([]string{"launch", "-D", "external-resources=none", "--", "true"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, stderr.String())
	}
	for _, w := range []string{"warning", `"loud"`, "debug, info, warn, error", "logging at info"} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
		}
	}
}
