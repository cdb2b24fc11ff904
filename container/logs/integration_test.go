//go:build integration

package logs

// `yarn-am logs` against the real mini cluster (make minicluster-up; source .minicluster/env): the
// real bin/yarn-am (YARN_AM_BIN) submits jobs and reads their logs; Hadoop's own LogsCLI (through
// YARN_AM_HADOOP_JAVA) is the oracle for the aggregated content.
//
// The harness aggregates logs to HDFS (testdata/minicluster/README.md, "Log aggregation"); on a
// cluster with yarn.log-aggregation-enable=false these tests assert the NodeManagers' copies
// instead of the aggregated ones. The live and follow tests are the same on both.

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/testkit/itest"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

type itEnv struct {
	bin, worker, smi string
	aggregation      bool
}

var (
	itOnce sync.Once
	itVal  itEnv
	itErr  error
)

func integrationEnv(t *testing.T) itEnv {
	t.Helper()
	itest.RequireEnv(t, "HADOOP_CONF_DIR", "YARN_AM_HADOOP_JAVA")
	// YARN_AM_BIN (make integration sets it) or a fresh build (make test-secure sets none).
	bin, wkr := itest.Binary(t), itest.Worker(t)
	itOnce.Do(func() {
		itVal.bin, itVal.worker, itVal.smi = bin, wkr, itest.FakeSMI()
		conf, err := yarnrpc.LoadConfigFromEnv()
		if err != nil {
			itErr = err
			return
		}
		v, _ := conf.Get(KeyAggregationEnable)
		itVal.aggregation = strings.TrimSpace(v) == "true"
	})
	require.NoError(t, itErr)
	return itVal
}

// writeJob writes a job file: n TaskExecutors with a GPU each running command.
func writeJob(t *testing.T, e itEnv, name, command string, maxFailures int) string {
	t.Helper()
	job := fmt.Sprintf(`name = %q
max-attempts = 1
"external-resources" = "gpu"
"external-resource.gpu.amount" = 1
"external-resource.gpu.yarn.config-key" = "yarn.io/gpu"
"external-resource.gpu.param.discovery-script.args" = "--enable-coordination-mode --coordination-dir %s"
[am]
memory = 256
[taskexecutor]
instances = 2
command = %q
memory = 256
max-failures = %d
files = [%q, %q]
[taskexecutor.env]
PATH = "$PWD:/usr/local/bin:/usr/bin:/bin"
FAKE_GPU_COUNT = "4"
`, name, coordinationDir(), command, maxFailures, e.worker, e.smi)
	p := filepath.Join(t.TempDir(), name+".toml")
	require.NoError(t, os.WriteFile(p, []byte(job), 0o644))
	return p
}

func yarnAM(ctx context.Context, e itEnv, env []string, args ...string) (stdout, stderr string, code int) {
	cmd := exec.CommandContext(ctx, e.bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var o, s bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &s
	err := cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if err != nil && code == 0 {
		code = -1
	}
	return o.String(), s.String(), code
}

// appRE finds the application submit names as its own: its output may name others first (the
// leftover sweep, docs/running.md#nothing-left-behind).
var appRE = regexp.MustCompile(`submitted (application_\d+_\d+)`)

func submit(t *testing.T, e itEnv, job string, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, errOut, _ := yarnAM(ctx, e, nil, append([]string{"submit", job}, args...)...)
	var app string
	if m := appRE.FindStringSubmatch(out + errOut); m != nil {
		app = m[1]
	}
	require.NotEmpty(t, app, "no application id in submit's output:\n%s\n%s", out, errOut)
	return app, out + errOut
}

var ourHeader = regexp.MustCompile(`(?m)^==> (\S+) on (\S+): (.+) \((\d+) bytes\) <==\n`)

// ourLogs parses yarn-am logs' output into "container/file" -> content (exactly size bytes).
func ourLogs(t *testing.T, out string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, m := range ourHeader.FindAllStringSubmatchIndex(out, -1) {
		n, _ := strconv.Atoi(out[m[8]:m[9]])
		require.LessOrEqual(t, m[1]+n, len(out), "header %q promises more than was printed", out[m[0]:m[1]])
		got[out[m[2]:m[3]]+"/"+out[m[6]:m[7]]] = out[m[1] : m[1]+n]
	}
	return got
}

// logsWhenAggregated runs yarn-am logs until the aggregated logs are complete (the NMs upload them
// right after the application ends); gives up within 90 s.
func logsWhenAggregated(t *testing.T, e itEnv, args ...string) (string, string, int) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		out, errOut, code := yarnAM(ctx, e, nil, append([]string{"logs"}, args...)...)
		cancel()
		if (code == 0 && !strings.Contains(errOut, "still uploading")) || time.Now().After(deadline) || !strings.Contains(errOut, "not aggregated yet") && code != 0 {
			return out, errOut, code
		}
		time.Sleep(time.Second)
	}
}

// TestLogsOfFinishedApplicationMatchHadoop: the logs of an ended application are every
// TaskExecutor's stdout with the worker's GPU line, and, file by file, exactly what Hadoop's own
// `yarn logs -applicationId` prints.
func TestLogsOfFinishedApplicationMatchHadoop(t *testing.T) {
	e := integrationEnv(t)
	app, sub := submit(t, e, writeJob(t, e, "logs-finished", "./worker", 1))
	require.Contains(t, sub, "final status SUCCEEDED", sub)

	start := time.Now()
	out, errOut, code := logsWhenAggregated(t, e, app)
	if !e.aggregation {
		// The NodeManagers still keep the logs of an application that just ended.
		require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
		assert.Contains(t, errOut, "log aggregation is off on this cluster; these are the logs the NodeManagers still keep")
		got := ourLogs(t, out)
		var gpu int
		for k, v := range got {
			if strings.HasSuffix(k, "/stdout") && regexp.MustCompile(`worker: gpu indexes from file=\d env=\d`).MatchString(v) {
				gpu++
			}
		}
		assert.Equal(t, 2, gpu, "both TaskExecutors' stdout:\n%s", out)
		assert.Contains(t, got, appContainer(app, 1)+"/am.stderr", "the AM's container too")
		return
	}
	require.Equal(t, 0, code, "stderr:\n%s", errOut)
	t.Logf("aggregated logs of %s read %.1f s after the application ended", app, time.Since(start).Seconds())
	got := ourLogs(t, out)
	var stdouts int
	for k, v := range got {
		if strings.HasSuffix(k, "/stdout") {
			stdouts++
			assert.Regexp(t, `worker: gpu indexes from file=\d env=\d CUDA_VISIBLE_DEVICES=\d`, v, k)
		}
	}
	assert.Equal(t, 2, stdouts, "one stdout per TaskExecutor")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Getenv("YARN_AM_HADOOP_JAVA"), "org.apache.hadoop.yarn.client.cli.LogsCLI", "-applicationId", app)
	var hadoopOut bytes.Buffer
	cmd.Stdout = &hadoopOut
	require.NoError(t, cmd.Run())
	want := map[string]string{}
	head := regexp.MustCompile(`(?m)^Container: (\S+) on (\S+)\nLogAggregationType: \S+\n=+\nLogType:(.*)\nLogLastModifiedTime:.*\nLogLength:(\d+)\nLogContents:\n`)
	data := hadoopOut.String()
	for _, m := range head.FindAllStringSubmatchIndex(data, -1) {
		n, _ := strconv.Atoi(data[m[8]:m[9]])
		want[data[m[2]:m[3]]+"/"+data[m[6]:m[7]]] = data[m[1] : m[1]+n]
	}
	require.NotEmpty(t, want, "Hadoop's yarn logs printed nothing:\n%s", data)
	if v := os.Getenv("YARN_AM_HADOOP_VERSION"); strings.HasPrefix(v, "3.1.") || strings.HasPrefix(v, "3.2.") {
		// Hadoop 3.1's and 3.2's yarn logs leave out empty files (prelaunch.err, am.stdout), which
		// 3.3 and later print and yarn-am prints too: compare the files with content
		// (docs/development.md#supported-hadoop-versions).
		for k, content := range got {
			if content == "" {
				delete(got, k)
			}
		}
	}
	assert.Equal(t, len(want), len(got), "how many container log files")
	for k, w := range want {
		assert.Equal(t, w, got[k], "%s: ours and Hadoop's yarn logs differ", k)
	}

	// The filters: one container's one file, and the AM's.
	var te string
	for k := range got {
		if strings.HasSuffix(k, "/stdout") {
			te = strings.TrimSuffix(k, "/stdout")
			break
		}
	}
	out, errOut, code = yarnAM(ctx, e, nil, "logs", app, "--container", te, "--file", "stdout")
	require.Equal(t, 0, code, errOut)
	only := ourLogs(t, out)
	assert.Equal(t, map[string]string{te + "/stdout": got[te+"/stdout"]}, only)
	out, errOut, code = yarnAM(ctx, e, nil, "logs", app, "--am", "--file", "am.stderr", "--tail", "1")
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `==> container_\d+_\d+_01_000001 on \S+: am\.stderr \(\d+ bytes\) <==\n[^\n]*am peak RSS[^\n]*\n$`, out)

	// Another user may not read the owner's aggregated logs (the directory is rwxrwx--- owner:group).
	out, errOut, code = yarnAM(ctx, e, []string{"HADOOP_USER_NAME=intruder"}, "logs", app)
	assert.Equal(t, 1, code, "stdout:\n%s", out)
	assert.Contains(t, errOut, "no permission to read the aggregated logs of "+app+" as intruder", errOut)
	assert.Empty(t, out)
}

// TestLogsFollowStreamsNewOutput: --follow on a running application prints a line the worker writes
// after the command started (the worker waits for a file the test creates once follow has printed
// the first line), and ends when the application ends.
func TestLogsFollowStreamsNewOutput(t *testing.T) {
	e := integrationEnv(t)
	mark := filepath.Join(t.TempDir(), "go")
	job := writeJob(t, e, "logs-follow", fmt.Sprintf("echo first line; while [ ! -e %s ]; do sleep 0.2; done; echo second line $CONTAINER_ID; sleep 600", mark), 0)
	app, _ := submit(t, e, job, "--detach")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	defer yarnAM(context.Background(), e, nil, "kill", app)

	// The plain (not followed) view of a running application: live from the NodeManagers.
	deadline := time.Now().Add(90 * time.Second)
	for {
		out, _, code := yarnAM(ctx, e, nil, "logs", app, "--file", "stdout")
		if code == 0 && strings.Count(out, "first line") == 2 {
			break
		}
		require.True(t, time.Now().Before(deadline), "no live stdout of both TaskExecutors within 90 s:\n%s", out)
		time.Sleep(time.Second)
	}

	cmd := exec.CommandContext(ctx, e.bin, "logs", app, "--follow", "--file", "stdout")
	var out, errOut syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.NoError(t, cmd.Start())
	require.Eventually(t, func() bool { return strings.Count(out.String(), "first line") == 2 }, 30*time.Second, 100*time.Millisecond, "follow printed:\n%s", out.String())
	require.NotContains(t, out.String(), "second line")
	followStarted := time.Now()
	require.NoError(t, os.WriteFile(mark, nil, 0o644))
	require.Eventually(t, func() bool { return strings.Count(out.String(), "second line container_") == 2 }, 30*time.Second, 100*time.Millisecond, "follow printed:\n%s", out.String())
	t.Logf("both second lines streamed %.1f s after the worker could write them", time.Since(followStarted).Seconds())

	_, kerr, kcode := yarnAM(ctx, e, nil, "kill", app)
	require.Equal(t, 0, kcode, kerr)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		assert.NoError(t, err, "stderr:\n%s", errOut.String())
		assert.Contains(t, errOut.String(), app+" ended (KILLED)")
	case <-time.After(30 * time.Second):
		t.Fatalf("--follow did not end within 30 s of the application's end; stderr:\n%s", errOut.String())
	}
}

// TestLogsOfAFailedTaskExecutor: the attached submit names the command for a failed TaskExecutor's
// logs, and that command prints them (or says why it cannot).
func TestLogsOfAFailedTaskExecutor(t *testing.T) {
	e := integrationEnv(t)
	app, sub := submit(t, e, writeJob(t, e, "logs-failing", "./worker --exit 3", 0))
	m := regexp.MustCompile(`its logs: yarn-am logs (` + app + `) --container (container_\S+)`).FindStringSubmatch(sub)
	require.NotNil(t, m, "submit did not name the logs command of the failed TaskExecutor:\n%s", sub)
	out, errOut, code := logsWhenAggregated(t, e, app, "--container", m[2])
	require.Equal(t, 0, code, errOut)
	got := ourLogs(t, out)
	assert.Contains(t, got[m[2]+"/stdout"], "worker: gpu indexes from file=")
	for k := range got {
		assert.True(t, strings.HasPrefix(k, m[2]+"/"), "only the asked container: %s", k)
	}
}

// TestLogsBadInput: wrong flags name the flag, the value and what is valid, before any cluster call.
func TestLogsBadInput(t *testing.T) {
	e := integrationEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"logs", "app_1"}, `"app_1" is not an application id`},
		{[]string{"logs", "application_1_0001", "--container", "container_2_0001_01_000002"}, "--container container_2_0001_01_000002 belongs to application_2_0001, not to application_1_0001"},
		{[]string{"logs", "application_1_0001", "--container", "c1"}, "--container c1: "},
		{[]string{"logs", "application_1_0001", "--tail", "-3"}, "--tail -3: want a number of lines"},
		{[]string{"logs", "application_1_0001", "--file", "../x"}, `--file "../x": want a log file name`},
	} {
		_, errOut, code := yarnAM(ctx, e, nil, c.args...)
		assert.Equal(t, 2, code, "%v: %s", c.args, errOut)
		assert.Contains(t, errOut, c.want, "%v", c.args)
	}
	// An application the RM does not know: 5, as for status (docs/running.md#exit-codes).
	_, errOut, code := yarnAM(ctx, e, nil, "logs", "application_1_9999")
	assert.Equal(t, 5, code, errOut)
	assert.Contains(t, errOut, "application_1_9999")
	// A flag value of the wrong form says what the flag takes.
	_, errOut, code = yarnAM(ctx, e, nil, "logs", "application_1_0001", "--tail", "abc")
	assert.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, `--tail "abc": not a whole number`)
}

// appContainer is container number n of the first attempt of app.
func appContainer(app string, n int) string {
	return fmt.Sprintf("container_%s_01_%06d", strings.TrimPrefix(app, "application_"), n)
}

// syncBuffer is a bytes.Buffer the test reads while the command writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// coordinationDir is the GPU coordination directory of the mini cluster the tests run on (one per
// cluster: two clusters side by side have the same node addresses and GPU indexes).
func coordinationDir() string {
	state := os.Getenv("YARN_AM_MINICLUSTER_STATE")
	if state == "" {
		state = os.Getenv("HADOOP_CONF_DIR")
	}
	return fmt.Sprintf("%s/yarn-am-gpu-%08x", os.TempDir(), crc32.ChecksumIEEE([]byte(state)))
}
