//go:build integration

package am_test

import (
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

	"github.com/yarn-am/yarn-am/testkit/e2e"
)

// The worker's own error, once (docs/running.md#the-workers-own-error), on the mini cluster.

// TestE2EWorkerStderrShownOncePerContainer: a worker that writes to stderr and exits 3 fails; the
// attached submit, which holds the application's secret, reads the AM's HTTPS API and prints the
// worker's own lines once per failed container, while the diagnostics (the RM shows them to anyone who
// can list applications) only point to them, and none of YARN's "Last 4096 bytes of stderr" (which
// ends in the launcher's log lines) is shown.
func TestE2EWorkerStderrShownOncePerContainer(t *testing.T) {
	e2e.Env(t)
	// The line the worker writes is not in its command, which submit may print.
	job := writeJob(t, jobSpec{name: "e2e-stderr-once", instances: 1, gpus: 1, command: `echo "worker-err$((40+2)) bad input" >&2; exit 3`, maxFailures: 1})
	r := e2e.YarnAM(t, 5*time.Minute, "submit", job)
	require.NotEqual(t, 0, r.Code, "submit of a failing job must fail:\n%s", r)
	all := r.Stdout + r.Stderr
	failed := regexp.MustCompile(`completed: TaskExecutor (container_\S+) on \S+ exited with code 3`).FindAllStringSubmatch(all, -1)
	require.GreaterOrEqual(t, len(failed), 2, "max-failures 1: two failures end the job:\n%s", r)
	// submit holds the secret: it follows the AM's HTTPS API and gets the worker's lines, once per
	// failed container (docs/running.md#the-workers-own-error).
	assert.Equal(t, len(failed), strings.Count(all, "worker-err42 bad input"), "the worker's line, once per failed container:\n%s", r)
	assert.NotContains(t, all, "need the application's secret", r.String())
	assert.NotContains(t, all, "Last 4096 bytes", r.String())
	assert.Contains(t, r.Stderr, "exit code 3", "the outcome line keeps the headline:\n%s", r)

	id := e2e.SubmittedID(r.Stdout)
	require.NotEmpty(t, id, r.String())
	d := e2e.Status(t, id)
	assert.Equal(t, "FAILED", d.Report.FinalStatus)
	listed := regexp.MustCompile(`(?m)^- container_\S+ on \S+ exited with code 3: its last stderr lines are shown to the application's owner`).FindAllString(d.Report.Diagnostics, -1)
	require.NotEmpty(t, listed, d.Report.Diagnostics)
	assert.NotContains(t, d.Report.Diagnostics, "worker-err42 bad input", "the RM's diagnostics, which anyone who can list applications reads, hold no tail")
	assert.NotContains(t, d.Report.Diagnostics, "Last 4096 bytes")
}

// TestE2EOwnersStatusShowsWorkerStderr: `yarn-am status` of a running application whose first worker
// failed shows the worker's stderr line to the user who submitted it (the secret submit kept on this
// machine), not to a user without it, who is told why; the RM's diagnostics never quote it
// (docs/security.md#what-anonymous-readers-see).
func TestE2EOwnersStatusShowsWorkerStderr(t *testing.T) {
	e2e.Env(t)
	// The first worker to run fails; its replacement finds the mark and runs until the test kills it.
	mark := filepath.Join(t.TempDir(), "failed")
	job := writeJob(t, jobSpec{name: "e2e-stderr-status", instances: 1, gpus: 1, maxFailures: 3,
		command: fmt.Sprintf(`if mkdir %q 2>/dev/null; then echo "worker-err$((40+2)) bad input" >&2; exit 3; fi; sleep 600`, mark)})
	id := e2e.SubmitDetached(t, job)

	var out string
	deadline := time.Now().Add(3 * time.Minute) // gives up within 3 min
	for {
		r := e2e.YarnAM(t, time.Minute, "status", id)
		require.Equal(t, 0, r.Code, r.String())
		out = r.Stdout
		if strings.Contains(out, "worker-err42 bad input") || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	require.Regexp(t, `Last stderr lines of container_\S+ \(exit 3\):\n  worker-err42 bad input\n`, out, "the owner's status shows the worker's line")
	assert.NotContains(t, out, "need the application's secret", out)

	// Another user's view: no secret of the application in its configuration directory.
	cmd := exec.Command(e2e.Env(t), "status", id)
	cmd.Env = append(os.Environ(), "YARN_AM_CONFIG_DIR="+t.TempDir())
	anon, err := cmd.CombinedOutput()
	require.NoError(t, err, string(anon))
	assert.NotContains(t, string(anon), "worker-err42 bad input")
	assert.Contains(t, string(anon), "the failed workers' last stderr lines need the application's secret: this machine keeps no secret of "+id, string(anon))

	d := e2e.Status(t, id)
	assert.Equal(t, "RUNNING", d.Report.State)
	assert.NotContains(t, d.Report.Diagnostics, "worker-err42 bad input", "the RM's diagnostics hold no tail")
}

// TestE2ENodeWithoutNvidiaSmiIsExcluded: GPU discovery fails on a node without nvidia-smi (here: not
// on the job's PATH); the node is excluded at the first failure and the message names what it lacks.
func TestE2ENodeWithoutNvidiaSmiIsExcluded(t *testing.T) {
	e2e.Env(t)
	path := writeJob(t, jobSpec{name: "e2e-no-smi", instances: 1, gpus: 1, command: "./worker --sleep 1s", maxFailures: 5})
	body, err := os.ReadFile(path)
	require.NoError(t, err)
	const withSMI = `PATH = "$PWD:/usr/local/bin:/usr/bin:/bin"`
	require.Contains(t, string(body), withSMI)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(body), withSMI, `PATH = "/usr/bin:/bin"`, 1)), 0o644))

	r := e2e.YarnAM(t, 5*time.Minute, "submit", path)
	require.NotEqual(t, 0, r.Code, "a job whose nodes lack nvidia-smi must fail:\n%s", r)
	all := r.Stdout + r.Stderr
	assert.Contains(t, all, "nvidia-smi not found", r.String())
	assert.Regexp(t, `node-excluded: node \S+ excluded: it cannot run this job's workers: nvidia-smi not found on PATH`, all)
	assert.NotContains(t, all, `discovery failed for resource gpu: discovery failed`, "said once")
	discoveries := strings.Count(all, "discovery-failed: ")
	excluded := strings.Count(all, "node-excluded: ")
	assert.Equal(t, discoveries, excluded, "each failing node is excluded at its first failure, not retried:\n%s", r)

	id := e2e.SubmittedID(r.Stdout)
	require.NotEmpty(t, id, r.String())
	d := e2e.Status(t, id)
	assert.Equal(t, "FAILED", d.Report.FinalStatus)
	assert.Contains(t, d.Report.Diagnostics, "every node of the cluster (2) is excluded", d.Report.Diagnostics)
	assert.Contains(t, d.Report.Diagnostics, "cannot run this job's workers: nvidia-smi not found on PATH", d.Report.Diagnostics)
}
