//go:build integration

package am_test

// End-to-end tests of the whole path: the real bin/yarn-am (YARN_AM_BIN) submits jobs to the
// mini cluster (make minicluster-up; source .minicluster/env), its ApplicationMaster launches the
// example worker under `yarn-am launch` with the fake nvidia-smi, and the tests check the outcome
// through yarn-am's own commands, the ResourceManager and the NodeManagers' container logs
// (YARN_AM_NM_LOG_DIRS). With the integration tag a missing cluster or binary is a failure, never a
// skip.

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/testkit/e2e"
	"github.com/yarn-am/yarn-am/testkit/itest"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// worker is the example worker, built once, statically, for the containers.
func worker(t *testing.T) string { return itest.Worker(t) }

// jobSpec is the variable part of a test job.
type jobSpec struct {
	name        string
	instances   int
	gpus        int
	command     string
	maxFailures int
	maxAttempts int    // 0: 1
	memory      string // taskexecutor.memory; "": 256
	teExtra     string // more [taskexecutor] lines
	ship        string // the file shipped beside the fake nvidia-smi; "": the test worker
	envExtra    string // more [taskexecutor.env] lines
	coord       string // the GPU coordination directory; "": e2e.CoordinationDir()
	fakeGPUs    int    // FAKE_GPU_COUNT, the GPUs the fake nvidia-smi shows; 0: 4
}

// writeJob writes a job file to a temp dir: the worker and the fake nvidia-smi are shipped, the fake is
// put on PATH, GPU discovery runs in coordination mode.
func writeJob(t *testing.T, s jobSpec) string {
	t.Helper()
	smi := itest.FakeSMI()
	ship := s.ship
	if ship == "" {
		ship = worker(t)
	}
	body := fmt.Sprintf(`name = %q
max-attempts = %d
"external-resources" = "gpu"
"external-resource.gpu.amount" = %d
"external-resource.gpu.yarn.config-key" = "yarn.io/gpu"
"external-resource.gpu.param.discovery-script.args" = "--enable-coordination-mode --coordination-dir %s"

[am]
memory = 256

[taskexecutor]
instances = %d
command = %q
memory = %q
max-failures = %d
files = [%q, %q]
%s

[taskexecutor.env]
PATH = "$PWD:/usr/local/bin:/usr/bin:/bin"
FAKE_GPU_COUNT = "%d"
%s`, s.name, max(s.maxAttempts, 1), s.gpus, cmp.Or(s.coord, e2e.CoordinationDir()), s.instances, s.command, cmp.Or(s.memory, "256"), s.maxFailures,
		ship, smi, s.teExtra, cmp.Or(s.fakeGPUs, 4), s.envExtra)
	p := filepath.Join(t.TempDir(), s.name+".toml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

// startFollow runs `yarn-am follow id` in the background for at most timeout. The function it returns
// waits for follow to end with the application and returns all it printed; the test fails when
// follow ended with an error or was still running at the timeout.
func startFollow(t *testing.T, bin, id string, timeout time.Duration) func() string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	var out bytes.Buffer // written by exec's copying until Wait returns; read only after that
	follow := exec.CommandContext(ctx, bin, "follow", id)
	follow.Stdout, follow.Stderr = &out, &out
	require.NoError(t, follow.Start())
	followed := make(chan error, 1)
	go func() { followed <- follow.Wait() }()
	return func() string {
		t.Helper()
		select {
		case err := <-followed:
			require.NoError(t, err, "follow:\n%s", out.String())
		case <-ctx.Done():
			<-followed // killed by the context: its output is complete once Wait returned
			t.Fatalf("follow did not end with the application within %s:\n%s", timeout, out.String())
		}
		return out.String()
	}
}

// workerLines returns, per container id, the node's log dir and the worker's "gpu indexes" line.
type workerLine struct {
	logDir, container, indexes string
}

var indexesRe = regexp.MustCompile(`worker: gpu indexes from file=(\S*) env=(\S*) CUDA_VISIBLE_DEVICES=(\S*)`)

func workerLines(t *testing.T, id string) []workerLine {
	t.Helper()
	var out []workerLine
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
		files, _ := filepath.Glob(filepath.Join(d, id, "*", "stdout"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			m := indexesRe.FindStringSubmatch(string(data))
			if m == nil {
				continue
			}
			assert.Equal(t, m[1], m[2], "file and env agree in %s", f)
			assert.Equal(t, m[1], m[3], "file and CUDA_VISIBLE_DEVICES agree in %s", f)
			out = append(out, workerLine{logDir: d, container: filepath.Base(filepath.Dir(f)), indexes: m[1]})
		}
	}
	return out
}

func TestE2EFourTaskExecutorsOneGPUEachGetDistinctGPUs(t *testing.T) {
	e2e.Env(t)
	job := writeJob(t, jobSpec{name: "e2e-gpu-4x1", instances: 4, gpus: 1, command: "./worker --sleep 20s", maxFailures: 1})
	start := time.Now()
	id := e2e.SubmitDetached(t, job)

	// Follow status until the end, noting each container's GPU index as status shows it while the
	// TaskExecutors run, and when all four first ran at once.
	fromStatus := map[string]string{}
	var allRunning time.Duration
	final := e2e.WaitFor(t, id, 4*time.Minute, "the end", func(d e2e.StatusDoc) bool {
		if d.AM != nil {
			n := 0
			for _, c := range d.AM.Containers {
				if c.State == "RUNNING" {
					n++
				}
				if g := c.Infos["gpu"]; len(g) == 1 {
					fromStatus[c.ID] = g[0]["index"]
				}
			}
			if n == 4 && allRunning == 0 {
				allRunning = time.Since(start)
			}
		}
		return e2e.IsEnded(d.Report.State)
	})
	t.Logf("submit to 4 TaskExecutors running: %s", allRunning.Round(100*time.Millisecond))
	require.Equal(t, "FINISHED", final.Report.State, "diagnostics: %s", final.Report.Diagnostics)
	require.Equal(t, "SUCCEEDED", final.Report.FinalStatus, "diagnostics: %s", final.Report.Diagnostics)
	assert.NotZero(t, allRunning, "status showed all 4 TaskExecutors running at once")

	lines := workerLines(t, id)
	require.Len(t, lines, 4, "four worker logs with their GPU lines")
	perNode := map[string][]string{}
	for _, l := range lines {
		perNode[l.logDir] = append(perNode[l.logDir], l.indexes)
		assert.Regexp(t, `^[0-3]$`, l.indexes, "one GPU of the node's four: %s", l.container)
	}
	assert.Len(t, fromStatus, 4, "status showed every container's GPU index while it ran (the launcher reports it to the AM)")
	for _, l := range lines {
		if got, ok := fromStatus[l.container]; ok {
			assert.Equal(t, l.indexes, got, "status shows the index the worker printed, container %s", l.container)
		}
	}
	for node, idx := range perNode {
		sorted := append([]string(nil), idx...)
		sort.Strings(sorted)
		for i := 1; i < len(sorted); i++ {
			assert.NotEqual(t, sorted[i-1], sorted[i], "co-located workers share GPU %s on %s: %v", sorted[i], node, idx)
		}
	}
}

func TestE2EExitZeroSucceedsAndSubmitExitsZero(t *testing.T) {
	e2e.Env(t)
	job := writeJob(t, jobSpec{name: "e2e-exit0", instances: 2, gpus: 1, command: "./worker", maxFailures: 1})
	r := e2e.YarnAM(t, 5*time.Minute, "submit", job)
	require.Equal(t, 0, r.Code, "attached submit of a succeeding job:\n%s", r)
	assert.Contains(t, r.Stdout, "final status SUCCEEDED", r.String())
	assert.Contains(t, r.Stdout, "RUNNING", "state changes are shown:\n%s", r)
	assert.Regexp(t, `containers: requested \d+, allocated \d+, running \d+, completed \d+, failed \d+`, r.Stdout, "progress from the AM is shown")
}

func TestE2EExit3FailsAfterRetriesWithDiagnostics(t *testing.T) {
	e2e.Env(t)
	job := writeJob(t, jobSpec{name: "e2e-exit3", instances: 1, gpus: 1, command: "./worker --exit 3", maxFailures: 2})
	r := e2e.YarnAM(t, 5*time.Minute, "submit", job)
	require.NotEqual(t, 0, r.Code, "submit of a failing job must fail:\n%s", r)
	assert.Contains(t, r.Stderr, "FAILED", r.String())
	assert.Regexp(t, `(?i)exit[^0-9\n]{0,30}\b3\b`, r.Stderr, "diagnostics name exit code 3:\n%s", r)
	id := e2e.SubmittedID(r.Stdout)
	require.NotEmpty(t, id)
	d := e2e.Status(t, id)
	assert.Equal(t, "FAILED", d.Report.FinalStatus)
	assert.Regexp(t, `(?i)exit[^0-9\n]{0,30}\b3\b`, d.Report.Diagnostics)
}

func TestE2EDriverModeFinalStatusFollowsTheDriver(t *testing.T) {
	e2e.Env(t)
	job := writeJob(t, jobSpec{name: "e2e-driver", instances: 1, gpus: 1, command: "./worker --sleep 1h", maxFailures: 1})
	for _, tc := range []struct {
		driver string
		code   int
		final  string
	}{{"sleep 2; exit 0", 0, "SUCCEEDED"}, {"sleep 2; exit 1", 1, "FAILED"}} {
		t.Run(tc.final, func(t *testing.T) {
			r := e2e.YarnAM(t, 5*time.Minute, "submit", job, "--driver", tc.driver)
			assert.Equal(t, tc.code, r.Code, "driver %q:\n%s", tc.driver, r)
			id := e2e.SubmittedID(r.Stdout)
			require.NotEmpty(t, id, r.String())
			assert.Equal(t, tc.final, e2e.Status(t, id).Report.FinalStatus)
		})
	}
}

func TestE2EKillRunningJobRemovesStaging(t *testing.T) {
	e2e.Env(t)
	job := writeJob(t, jobSpec{name: "e2e-kill", instances: 1, gpus: 1, command: "./worker --sleep 1h", maxFailures: 1})
	id := e2e.SubmitDetached(t, job)
	d := e2e.WaitFor(t, id, 3*time.Minute, "RUNNING", func(d e2e.StatusDoc) bool {
		if e2e.IsEnded(d.Report.State) {
			t.Fatalf("%s ended before it could be killed: %+v", id, d.Report)
		}
		return d.Report.State == "RUNNING"
	})
	user := d.Report.User

	conf, err := yarnrpc.LoadConfigFromEnv()
	require.NoError(t, err)
	fsys, err := client.DialHDFS(conf, user)
	require.NoError(t, err)
	defer fsys.Close()
	dir := client.StagingDir(user, id)
	_, err = fsys.Stat(dir)
	require.NoError(t, err, "the staging directory exists while the job runs")

	r := e2e.YarnAM(t, 3*time.Minute, "kill", id)
	require.Equal(t, 0, r.Code, "kill:\n%s", r)
	assert.Contains(t, r.Stdout, "KILLED", r.String())
	assert.Contains(t, r.Stdout, "waiting for the ResourceManager to report it KILLED", "kill says what it waits for:\n%s", r)
	assert.Contains(t, r.Stdout, "for the ApplicationMaster to remove the staging directory", "kill says what it waits for:\n%s", r)
	assert.Equal(t, "KILLED", e2e.Status(t, id).Report.State)
	_, err = fsys.Stat(dir)
	assert.True(t, errors.Is(err, os.ErrNotExist), "staging directory %s is gone after kill (stat: %v)", dir, err)
}

func TestE2ETooManyGPUsFailFastNamingTheKey(t *testing.T) {
	e2e.Env(t)
	job := writeJob(t, jobSpec{name: "e2e-5gpus", instances: 1, gpus: 1, command: "./worker", maxFailures: 1})
	for _, cmd := range []string{"check", "submit"} {
		t.Run(cmd, func(t *testing.T) {
			r := e2e.YarnAM(t, time.Minute, cmd, job, "-D", "external-resource.gpu.amount=5")
			assert.Equal(t, 5, r.Code, "exit 5: does not fit (docs/running.md#exit-codes)\n%s", r)
			assert.Less(t, r.Took, 15*time.Second, "fails fast")
			assert.Contains(t, r.Stderr, "external-resource.gpu.amount", r.String())
			assert.NotContains(t, r.Stdout, "submitted", "nothing is submitted")
		})
	}
	r := e2e.YarnAM(t, time.Minute, "check", job)
	assert.Equal(t, 0, r.Code, "the same job with 1 GPU passes check:\n%s", r)
	assert.Contains(t, r.Stdout, "OK: ")
	assert.Contains(t, r.Stdout, "yarn.io/gpu=1")
}

// TestE2ESampleGPUDemoJobWithRelativePaths submits testdata/jobs/gpu-demo.toml verbatim from a copy of
// the repository layout it expects (../../bin/worker, ../fake-nvidia-smi/nvidia-smi), as make demo does:
// relative paths of a job must work for the client and must not trouble the AM, in whose container
// they mean nothing.
func TestE2ESampleGPUDemoJobWithRelativePaths(t *testing.T) {
	e2e.Env(t)
	root := t.TempDir()
	jobs := filepath.Join(root, "testdata", "jobs")
	smiDir := filepath.Join(root, "testdata", "fake-nvidia-smi")
	binDir := filepath.Join(root, "bin")
	for _, d := range []string{jobs, smiDir, binDir} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	copyFile := func(src, dst string, mode os.FileMode) {
		data, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(dst, data, mode))
	}
	copyFile("../testdata/jobs/gpu-demo.toml", filepath.Join(jobs, "gpu-demo.toml"), 0o644)
	copyFile("../testdata/fake-nvidia-smi/nvidia-smi", filepath.Join(smiDir, "nvidia-smi"), 0o755)
	copyFile(worker(t), filepath.Join(binDir, "worker"), 0o755)

	r := e2e.YarnAM(t, 5*time.Minute, "submit", filepath.Join(jobs, "gpu-demo.toml"))
	require.Equal(t, 0, r.Code, "attached submit of the demo job:\n%s", r)
	id := e2e.SubmittedID(r.Stdout)
	lines := workerLines(t, id)
	require.Len(t, lines, 2, "two workers printed their GPUs")
	for _, l := range lines {
		assert.Regexp(t, `^[0-3],[0-3]$`, l.indexes, "two GPUs each, container %s", l.container)
	}
}
