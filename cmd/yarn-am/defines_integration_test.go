//go:build integration

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/yarn-am/yarn-am/testkit/itest"
)

// TestDefineJobKeyReachesTheAM: -D taskexecutor.instances=2 on a job file of one instance runs two
// TaskExecutors: the client checks the job with it, and the AM applies it to the staged job file
// (docs/job-file.md#-d-overrides).
func TestDefineJobKeyReachesTheAM(t *testing.T) {
	itest.RequireEnv(t, "HADOOP_CONF_DIR")
	bin := itest.Binary(t)
	job := filepath.Join(t.TempDir(), "job.toml")
	if err := os.WriteFile(job, []byte("name = \"defines-e2e\"\n[taskexecutor]\ncommand = \"true\"\ninstances = 1\nmemory = 256\nmax-failures = 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "submit", job, "-D", "taskexecutor.instances=2")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	if !bytes.Contains(stdout.Bytes(), []byte("final status SUCCEEDED")) {
		t.Errorf("no final status SUCCEEDED")
	}
	if !regexp.MustCompile(`requested 2 TaskExecutor container\(s\)`).Match(stdout.Bytes()) {
		t.Errorf("the AM did not ask for two TaskExecutors (the -D instances), but for the file's one")
	}
	if n := len(regexp.MustCompile(`completed: TaskExecutor \S+ on \S+ exited with code 0`).FindAll(stdout.Bytes(), -1)); n != 2 {
		t.Errorf("%d TaskExecutors completed, want 2", n)
	}
}
