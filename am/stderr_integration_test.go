//go:build integration

package am_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The worker's own error, once (docs/running.md#the-workers-own-error), on the mini cluster.

// TestE2EWorkerStderrShownOncePerContainer: a worker that writes to stderr and exits 3 fails with
// diagnostics that point to its own lines, once per failed container, without quoting them (the RM
// shows them to anyone who can list applications), and none of YARN's "Last 4096 bytes of stderr"
// (which ends in the launcher's log lines).
func TestE2EWorkerStderrShownOncePerContainer(t *testing.T) {
	e2eEnv(t)
	// The line the worker writes is not in its command, which submit may print.
	job := writeJob(t, jobSpec{name: "e2e-stderr-once", instances: 1, gpus: 1, command: `echo "worker-err$((40+2)) bad input" >&2; exit 3`, maxFailures: 1})
	r := yarnAM(t, 5*time.Minute, "submit", job)
	require.NotEqual(t, 0, r.code, "submit of a failing job must fail:\n%s", r)
	all := r.stdout + r.stderr
	failed := regexp.MustCompile(`completed: TaskExecutor (container_\S+) on \S+ exited with code 3`).FindAllStringSubmatch(all, -1)
	require.GreaterOrEqual(t, len(failed), 2, "max-failures 1: two failures end the job:\n%s", r)
	// submit follows the tracking URL without the secret: it gets the exit, not the worker's lines
	// (docs/security.md#what-anonymous-readers-see).
	assert.NotContains(t, all, "worker-err42 bad input", "stderr tails only over HTTPS with the secret:\n%s", r)
	assert.NotContains(t, all, "Last 4096 bytes", r.String())
	assert.Contains(t, r.stderr, "exit code 3", "the outcome line keeps the headline:\n%s", r)

	id := submittedID(r.stdout)
	require.NotEmpty(t, id, r.String())
	d := status(t, id)
	assert.Equal(t, "FAILED", d.Report.FinalStatus)
	listed := regexp.MustCompile(`(?m)^- container_\S+ on \S+ exited with code 3: its last stderr lines are shown to the application's owner`).FindAllString(d.Report.Diagnostics, -1)
	require.NotEmpty(t, listed, d.Report.Diagnostics)
	assert.NotContains(t, d.Report.Diagnostics, "worker-err42 bad input", "the RM's diagnostics, which anyone who can list applications reads, hold no tail")
	assert.NotContains(t, d.Report.Diagnostics, "Last 4096 bytes")
}

// TestE2ENodeWithoutNvidiaSmiIsExcluded: GPU discovery fails on a node without nvidia-smi (here: not
// on the job's PATH); the node is excluded at the first failure and the message names what it lacks.
func TestE2ENodeWithoutNvidiaSmiIsExcluded(t *testing.T) {
	e2eEnv(t)
	path := writeJob(t, jobSpec{name: "e2e-no-smi", instances: 1, gpus: 1, command: "./worker --sleep 1s", maxFailures: 5})
	body, err := os.ReadFile(path)
	require.NoError(t, err)
	const withSMI = `PATH = "$PWD:/usr/local/bin:/usr/bin:/bin"`
	require.Contains(t, string(body), withSMI)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(body), withSMI, `PATH = "/usr/bin:/bin"`, 1)), 0o644))

	r := yarnAM(t, 5*time.Minute, "submit", path)
	require.NotEqual(t, 0, r.code, "a job whose nodes lack nvidia-smi must fail:\n%s", r)
	all := r.stdout + r.stderr
	assert.Contains(t, all, "nvidia-smi not found", r.String())
	assert.Regexp(t, `node-excluded: node \S+ excluded: it cannot run this job's workers: nvidia-smi not found on PATH`, all)
	assert.NotContains(t, all, `discovery failed for resource gpu: discovery failed`, "said once")
	discoveries := strings.Count(all, "discovery-failed: ")
	excluded := strings.Count(all, "node-excluded: ")
	assert.Equal(t, discoveries, excluded, "each failing node is excluded at its first failure, not retried:\n%s", r)

	id := submittedID(r.stdout)
	require.NotEmpty(t, id, r.String())
	d := status(t, id)
	assert.Equal(t, "FAILED", d.Report.FinalStatus)
	assert.Contains(t, d.Report.Diagnostics, "every node of the cluster (2) is excluded", d.Report.Diagnostics)
	assert.Contains(t, d.Report.Diagnostics, "cannot run this job's workers: nvidia-smi not found on PATH", d.Report.Diagnostics)
}
