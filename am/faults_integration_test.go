//go:build integration && faults

package am_test

import (
	"bytes"
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

// Faults of the cluster around a running job, on the real mini cluster in its fault modes (make
// test-faults): an RM failover (HA=1), a work-preserving RM restart (RECOVERY=1) and a lost
// NodeManager. Each job must come through whole: every TaskExecutor ran exactly once (or was replaced
// exactly once where its node died), counted from the NodeManagers' own container logs.

// control runs a fault control of the mini cluster harness (failover, rm-restart, nm-stop N).
func control(t *testing.T, args ...string) {
	t.Helper()
	sh, state := os.Getenv("YARN_AM_MINICLUSTER_SH"), os.Getenv("YARN_AM_MINICLUSTER_STATE")
	require.NotEmpty(t, sh, "YARN_AM_MINICLUSTER_SH is not set: start the cluster with make test-faults")
	cmd := exec.Command("bash", append([]string{sh, args[0], state}, args[1:]...)...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "minicluster.sh %v:\n%s", args, out)
}

// attached starts `yarn-am submit` attached (it follows the application to its end).
func attached(t *testing.T, job string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(e2e.Env(t), "submit", job)
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd, &out
}

// appOf waits for the application id in submit's output.
func appOf(t *testing.T, out *bytes.Buffer) string {
	t.Helper()
	var id string
	submitted := regexp.MustCompile(`submitted (application_\d+_\d+)`)
	require.Eventually(t, func() bool {
		m := submitted.FindStringSubmatch(out.String())
		if m != nil {
			id = m[1]
		}
		return id != ""
	}, 2*time.Minute, 200*time.Millisecond, "submit says it submitted the application:\n%s", out)
	t.Cleanup(func() { e2e.KillQuietly(id) })
	return id
}

// waitExit waits for the attached submit and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd, out *bytes.Buffer, d time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		return cmd.ProcessState.ExitCode()
	case <-time.After(d):
		t.Fatalf("the attached submit did not end within %s:\n%s", d, out)
	}
	return -1
}

// amLog is the text of every AM attempt's stderr of the application.
func amLog(id string) string {
	var b strings.Builder
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
		files, _ := filepath.Glob(filepath.Join(d, id, "container_*_000001", "am.stderr"))
		for _, f := range files {
			data, _ := os.ReadFile(f)
			b.Write(data)
		}
	}
	return b.String()
}

func runningTwo(t *testing.T, id string) {
	t.Helper()
	e2e.WaitFor(t, id, 3*time.Minute, "2 TaskExecutors running", func(d e2e.StatusDoc) bool { return d.AM != nil && d.AM.Counts.Running == 2 })
}

// rmFault: a job of 2 TaskExecutors runs across the fault; the attached submit follows the RM that is
// active afterwards by itself; the AM registers once more and launches nothing twice.
func rmFault(t *testing.T, fault ...string) {
	job := writeJob(t, jobSpec{name: "rmfault", instances: 2, gpus: 1, command: "./worker --sleep 30s", maxAttempts: 2})
	cmd, out := attached(t, job)
	id := appOf(t, out)
	runningTwo(t, id)
	start := time.Now()
	control(t, fault...)
	code := waitExit(t, cmd, out, 4*time.Minute)
	require.Equal(t, 0, code, "the attached submit followed the job to SUCCEEDED across %v:\n%s", fault, out)
	assert.Contains(t, out.String(), "final status SUCCEEDED")
	log := amLog(id)
	assert.Equal(t, 2, strings.Count(log, "am: registered"), "the AM registered once more after %v:\n%s", fault, log)
	tes := taskExecutorContainers(t, id)
	assert.Len(t, tes, 2, "TaskExecutor containers the NodeManagers ran: %v", tes)
	assert.Len(t, workerLines(t, id), 2, "each worker started exactly once")
	d := e2e.Status(t, id)
	assert.Equal(t, "SUCCEEDED", d.Report.FinalStatus)
	t.Logf("%v: %d TaskExecutor containers, 0 duplicates, job done %s after the fault", fault, len(tes), time.Since(start).Round(time.Second))
}

func TestFaultRMFailover(t *testing.T) {
	if os.Getenv("YARN_AM_HA") != "1" {
		t.Fatal("YARN_AM_HA is not 1: this test needs the HA mini cluster (make test-faults)")
	}
	rmFault(t, "failover")
}

func TestFaultRMRestart(t *testing.T) {
	if os.Getenv("YARN_AM_RECOVERY") != "1" || os.Getenv("YARN_AM_HA") == "1" {
		t.Fatal("this test needs the RECOVERY=1 mini cluster (make test-faults)")
	}
	rmFault(t, "rm-restart")
}

// TestFaultNodeManagerLost: one TaskExecutor of 3 GPUs on each node (4 GPUs a node: one fits); the node
// without the AM is stopped. Its container is reported lost, not counted as a failure; a replacement
// starts on the surviving node once that node's TaskExecutor is done, and the job succeeds.
func TestFaultNodeManagerLost(t *testing.T) {
	if os.Getenv("YARN_AM_NM_EXPIRY_MS") == "" || os.Getenv("YARN_AM_NM_EXPIRY_MS") == "600000" {
		t.Fatal("this test needs a mini cluster with a short NodeManager expiry (make test-faults)")
	}
	id := e2e.SubmitDetached(t, writeJob(t, jobSpec{name: "nmlost", instances: 2, gpus: 3, command: "./worker --sleep 20s", maxFailures: 0}))
	runningTwo(t, id)
	dirs := strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",")
	victim := -1
	for i, d := range dirs {
		am, _ := filepath.Glob(filepath.Join(d, id, "container_*_01_000001"))
		if len(am) == 0 {
			victim = i
		}
	}
	require.NotEqual(t, -1, victim, "one NodeManager runs no AM")
	start := time.Now()
	control(t, "nm-stop", fmt.Sprint(victim))

	d := e2e.WaitFor(t, id, 4*time.Minute, "the end", func(d e2e.StatusDoc) bool { return e2e.IsEnded(d.Report.State) })
	require.Equal(t, "SUCCEEDED", d.Report.FinalStatus, d.Report.Diagnostics)
	tes := taskExecutorContainers(t, id)
	assert.Len(t, tes, 3, "2 TaskExecutors and 1 replacement for the one on the lost node: %v", tes)
	// The surviving node ran its TaskExecutor and the replacement; the lost node's worker printed its
	// line only if it got that far before the node stopped (its directories may go with it).
	perDir := map[string]map[string]bool{}
	for _, l := range workerLines(t, id) {
		if perDir[l.logDir] == nil {
			perDir[l.logDir] = map[string]bool{}
		}
		assert.False(t, perDir[l.logDir][l.container], "one worker line per container: %s", l.container)
		perDir[l.logDir][l.container] = true
	}
	for i, d := range dirs {
		if i == victim {
			assert.LessOrEqual(t, len(perDir[d]), 1, "the lost node ran one TaskExecutor and no replacement")
		} else {
			assert.Len(t, perDir[d], 2, "the surviving node ran its TaskExecutor and the replacement")
		}
	}
	log := amLog(id)
	assert.Contains(t, log, "not counted", "the lost container is not the worker's fault:\n%s", log)
	assert.NotContains(t, log, "failure limit", "the failure limit (max-failures = 0) was not touched")
	t.Logf("lost NodeManager: %d TaskExecutor containers (1 replacement), 0 duplicates, job done %s after the fault", len(tes), time.Since(start).Round(time.Second))
}
