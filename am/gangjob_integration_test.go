//go:build integration

package am_test

// The helpers of the tests that run a real framework's script as a gang job on the mini cluster
// (docs/running.md#pytorch, docs/running.md#jax): TestTorchDDPFourRanksOneGPUEach and
// TestJAXAllReduceThreeRanksOneGPUEach write a job with gangScriptJob, run it with runGangJob and read
// the script's lines from the containers' stdout with scriptLines.

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/testkit/e2e"
)

// gangScriptJob writes a gang job whose TaskExecutors get gpus fake GPUs each and run command with
// script (a path relative to the am package, e.g. ../testdata/torch/ddp.py) and the fake nvidia-smi
// shipped beside it.
func gangScriptJob(t *testing.T, name, script string, instances, gpus int, memory, command string) string {
	t.Helper()
	script, err := filepath.Abs(script)
	require.NoError(t, err)
	return writeJob(t, jobSpec{name: name, instances: instances, gpus: gpus, command: command, memory: memory, ship: script,
		teExtra: "gang = true\ngang-timeout = \"3m\"", envExtra: "OMP_NUM_THREADS = \"1\"\n"})
}

// scriptLine is one line of a container's stdout that matched a script's pattern, with the container
// and node (NodeManager log dir) it came from.
type scriptLine struct {
	node, container string
	m               []string // the submatches, m[0] the whole line
}

// scriptLines reads every line of the application's containers' stdout that matches re (trimmed).
func scriptLines(t *testing.T, id string, re *regexp.Regexp) []scriptLine {
	t.Helper()
	var out []scriptLine
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
		files, _ := filepath.Glob(filepath.Join(d, id, "*", "stdout"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			for _, l := range strings.Split(string(data), "\n") {
				if m := re.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
					out = append(out, scriptLine{node: d, container: filepath.Base(filepath.Dir(f)), m: m})
				}
			}
		}
	}
	return out
}

// runGangJob submits the job, waits for its end and returns the application id; it fails unless the
// application SUCCEEDED.
func runGangJob(t *testing.T, job string) string {
	t.Helper()
	start := time.Now()
	id := e2e.SubmitDetached(t, job)
	d := e2e.WaitFor(t, id, 6*time.Minute, "the end", func(d e2e.StatusDoc) bool { return e2e.IsEnded(d.Report.State) })
	t.Logf("%s: submit to %s in %s", id, d.Report.FinalStatus, time.Since(start).Round(100*time.Millisecond))
	require.Equal(t, "SUCCEEDED", d.Report.FinalStatus, "%s\n%s", d.Report.Diagnostics, e2e.ContainerLogs(id))
	return id
}

// venvPython returns the python named by the variable env (as `make integration` passes it, from
// `make target`) and what it printed running code, the probe that it has the framework; it fails the
// test when env is unset, not absolute, or the probe fails (with the integration tag a missing
// environment is a failure, never a skip).
func venvPython(t *testing.T, env, target, code string) (py, out string) {
	t.Helper()
	py = os.Getenv(env)
	if py == "" {
		t.Fatalf("%s is not set: run 'make %s' and set it to the environment's bin/python (make integration does both)", env, target)
	}
	if !filepath.IsAbs(py) {
		t.Fatalf("%s=%.200q: want an absolute path (the containers run in their own working directories)", env, py)
	}
	cmd := exec.Command(py, "-c", code)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	require.NoError(t, err, "%s=%s fails its probe (make %s):\n%.2000s", env, py, target, stderr.String())
	return py, string(b)
}
