//go:build integration

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/testkit/itest"
)

// TestQueuePreflightAgainstTheMiniCluster: check and submit refuse a parent queue before anything is
// staged, suggest the leaf a misspelt queue meant, and the YARN type a Kubernetes resource name
// meant; the mini cluster's CapacityScheduler has root and root.default, and yarn.io/gpu.
func TestQueuePreflightAgainstTheMiniCluster(t *testing.T) {
	itest.RequireEnv(t, "HADOOP_CONF_DIR")
	dir := t.TempDir()
	job := filepath.Join(dir, "job.toml")
	if err := os.WriteFile(job, []byte("[taskexecutor]\ncommand = \"true\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	k8s := filepath.Join(dir, "k8s.toml")
	if err := os.WriteFile(k8s, []byte("external-resources = \"gpu\"\nexternal-resource.gpu.amount = 1\nexternal-resource.gpu.yarn.config-key = \"nvidia.com/gpu\"\n[taskexecutor]\ncommand = \"true\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"check a parent queue", []string{"check", job, "--queue", "root"}, contract.ExitRejected,
			[]string{`queue = "root" is a parent queue`, "leaf queue", "root.default"}},
		{"submit a parent queue", []string{"submit", job, "--queue", "root", "--detach"}, contract.ExitRejected,
			[]string{`queue = "root" is a parent queue`}},
		{"check a misspelt queue", []string{"check", job, "--queue", "defualt"}, contract.ExitRejected,
			[]string{`queue = "defualt"`, "no such queue", `did you mean "default"?`, "root.default"}},
		{"check a Kubernetes resource name", []string{"check", k8s}, contract.ExitRejected,
			[]string{"nvidia.com/gpu", `did you mean "yarn.io/gpu"?`}},
		{"check the leaf queue", []string{"check", job, "--queue", "default"}, 0, []string{"OK: job job fits the cluster"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(c.args, &stdout, &stderr)
			out := stderr.String() + stdout.String()
			t.Logf("exit %d:\n%s", code, out)
			if code != c.code {
				t.Errorf("exit %d, want %d", code, c.code)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q", w)
				}
			}
			if c.code != 0 && strings.Contains(out, "application_") {
				t.Errorf("an application id was reserved (and files staged) before the refusal")
			}
		})
	}
}
