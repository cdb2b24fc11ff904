//go:build integration

package am_test

// Flink on yarn-am on the mini cluster (docs/flink.md#integration-design): the real bin/yarn-am
// submits [flink] jobs whose JobManager is the AM's driver and whose TaskExecutors are Flink
// TaskManagers, with the Flink home of make flink-dist and the test job of make flink-job
// (testdata/flink/job). The fake nvidia-smi gives each node GPUs 0-3.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/container/flink"
)

// flinkInputs returns the Flink home and the test job's jar: $YARN_AM_FLINK_HOME and
// $YARN_AM_FLINK_JOB, else where make flink-dist and make flink-job put them.
func flinkInputs(t *testing.T) (home, jar string) {
	t.Helper()
	home = os.Getenv("YARN_AM_FLINK_HOME")
	if home == "" {
		cache := os.Getenv("YARN_AM_CACHE")
		if cache == "" {
			h, err := os.UserHomeDir()
			require.NoError(t, err)
			cache = filepath.Join(h, ".cache", "yarn-am")
		}
		home = filepath.Join(cache, "flink-1.20.5")
	}
	jar = os.Getenv("YARN_AM_FLINK_JOB")
	if jar == "" {
		jar, _ = filepath.Abs("../bin/flink-job/yarn-am-flink-job.jar")
	}
	for _, p := range []string{filepath.Join(home, "lib"), jar} {
		_, err := os.Stat(p)
		require.NoError(t, err, "run 'make flink-dist flink-job' (make integration does)")
	}
	return home, jar
}

// flinkJob writes a [flink] job: instances TaskManagers of 1024 MiB with gpus fake GPUs and one slot
// each, the test job run with args, extra lines in [flink.config].
func flinkJob(t *testing.T, name string, instances, gpus int, args []string, config string) string {
	t.Helper()
	home, jar := flinkInputs(t)
	program := fmt.Sprintf("jar = %q\nargs = [%s]", jar, "%s")
	if args == nil {
		program = "" // a session cluster
	}
	smi, err := filepath.Abs("../testdata/fake-nvidia-smi/nvidia-smi")
	require.NoError(t, err)
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	body := fmt.Sprintf(`name = %q
max-attempts = 1
"external-resources" = "gpu"
"external-resource.gpu.amount" = %d
"external-resource.gpu.yarn.config-key" = "yarn.io/gpu"
"external-resource.gpu.driver-factory.class" = "org.apache.flink.externalresource.gpu.GPUDriverFactory"
"external-resource.gpu.param.discovery-script.args" = "--enable-coordination-mode --coordination-dir %s"

[flink]
home = %q
%s

[flink.config]
"taskmanager.numberOfTaskSlots" = 1
%s

[taskexecutor]
instances = %d
memory = 1024
max-failures = 0
files = [%q]

[taskexecutor.env]
PATH = "$PWD:/usr/local/bin:/usr/bin:/bin"
FAKE_GPU_COUNT = "4"
`, name, gpus, coordinationDir(), home, strings.Replace(program, "%s", strings.Join(quoted, ", "), 1), config, instances, smi)
	p := filepath.Join(t.TempDir(), name+".toml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

// flinkStatus is the part of `yarn-am status --json` these tests read beyond statusDoc.
func flinkUI(t *testing.T, id string) string {
	t.Helper()
	r := yarnAM(t, time.Minute, "status", id, "--json")
	require.Equal(t, 0, r.code, "status:\n%s", r)
	var d struct {
		AM *struct {
			FlinkUI string `json:"flinkUI"`
		} `json:"am"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &d))
	if d.AM == nil {
		return ""
	}
	return d.AM.FlinkUI
}

var (
	flinkGPULine   = regexp.MustCompile(`YARN_AM_FLINK_GPU subtask=(\d+) container=(\S+) indexes=(\S*)`)
	flinkParallism = regexp.MustCompile(`YARN_AM_FLINK_PARALLELISM subtask=(\d+) parallelism=(\d+) container=(\S+)`)
)

// tmLines returns every match of re in the application's container stdout files.
func tmLines(id string, re *regexp.Regexp) [][]string {
	var out [][]string
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
		files, _ := filepath.Glob(filepath.Join(d, id, "*", "stdout"))
		for _, f := range files {
			data, _ := os.ReadFile(f)
			out = append(out, re.FindAllStringSubmatch(string(data), -1)...)
		}
	}
	return out
}

// containerGPUs maps each running container of status to its GPU indexes, joined by ","; nodes maps
// it to its node.
func containerGPUs(d statusDoc, nodes map[string]string) map[string]string {
	out := map[string]string{}
	if d.AM == nil {
		return out
	}
	for _, c := range d.AM.Containers {
		var idx []string
		for _, info := range c.Infos["gpu"] {
			idx = append(idx, info["index"])
		}
		if len(idx) > 0 {
			out[c.ID] = strings.Join(idx, ",")
			if nodes != nil {
				nodes[c.ID] = c.Node
			}
		}
	}
	return out
}

// TestFlinkTaskManagersSeeTheirOwnGPUs: a Flink application with 3 TaskManagers × 1 GPU on the two
// nodes (so two of them share a node) succeeds, and each TaskManager's operators saw exactly the GPU
// index status shows for its container; no two TaskManagers on one node saw the same GPU.
func TestFlinkTaskManagersSeeTheirOwnGPUs(t *testing.T) {
	e2eEnv(t)
	job := flinkJob(t, "flink-gpu", 3, 1, []string{"gpu", "3"}, "")
	start := time.Now()
	id := submitDetached(t, job)
	nodes := map[string]string{}
	d := waitFor(t, id, 4*time.Minute, "the TaskManagers' GPUs reported", func(d statusDoc) bool {
		return len(containerGPUs(d, nil)) == 3 || isEnded(d.Report.State)
	})
	gpus := containerGPUs(d, nodes)
	require.Len(t, gpus, 3, "status: %+v\n%s", d.Report, containerLogs(id))
	ui := flinkUI(t, id)
	assert.Regexp(t, `^http://[^/]+:\d+/$`, ui, "status shows the JobManager's web UI")
	end := waitFor(t, id, 5*time.Minute, "the end", func(d statusDoc) bool { return isEnded(d.Report.State) })
	t.Logf("measured: submit -> application ended %s (load %s)", time.Since(start).Round(time.Second), loadAvgE2E())
	require.Equal(t, "SUCCEEDED", end.Report.FinalStatus, "diagnostics: %s\n%s", end.Report.Diagnostics, containerLogs(id))
	lines := tmLines(id, flinkGPULine)
	require.Len(t, lines, 3, "three subtasks printed their GPUs:\n%s", containerLogs(id))
	seen := map[string]string{}
	for _, l := range lines {
		require.Contains(t, gpus, l[2], "the subtask ran in a TaskManager status lists")
		assert.Equal(t, gpus[l[2]], l[3], "the operator in %s saw the GPU status shows for it", l[2])
		key := nodes[l[2]] + " gpu " + l[3]
		assert.NotContains(t, seen, key, "two TaskManagers saw %s", key)
		seen[key] = l[2]
	}
	assert.Len(t, seen, 3, "one subtask in each TaskManager, each on its own GPU: %v", seen)
}

// TestFlinkFailingJobFailsWithFlinksRootCause: the application FAILS with Flink's root cause.
func TestFlinkFailingJobFailsWithFlinksRootCause(t *testing.T) {
	e2eEnv(t)
	job := flinkJob(t, "flink-fail", 1, 1, []string{"fail"}, "")
	r := yarnAM(t, 6*time.Minute, "submit", job)
	require.NotEqual(t, 0, r.code, "a failing Flink job fails the submit:\n%s", r)
	id := submittedID(r.stdout)
	d := status(t, id)
	assert.Equal(t, "FAILED", d.Report.FinalStatus)
	assert.Contains(t, d.Report.Diagnostics, "java.lang.IllegalStateException: yarn-am-flink-test deliberate failure in subtask 0",
		"Flink's root cause is the application's diagnostics\n%s", containerLogs(id))
}

// TestFlinkReactiveScaleTwoToThree: with reactive mode, yarn-am scale 2 -> 3 adds a TaskManager and
// the stream job's parallelism follows.
func TestFlinkReactiveScaleTwoToThree(t *testing.T) {
	e2eEnv(t)
	job := flinkJob(t, "flink-reactive", 2, 1, []string{"stream"}, `"scheduler-mode" = "reactive"
"jobmanager.adaptive-scheduler.scaling-interval.min" = "0 s"
"restart-strategy.type" = "fixed-delay"
"restart-strategy.fixed-delay.attempts" = 100
"restart-strategy.fixed-delay.delay" = "1 s"`)
	start := time.Now()
	id := submitDetached(t, job)
	atParallelism := func(p string) int {
		n := 0
		for _, l := range tmLines(id, flinkParallism) {
			if l[2] == p {
				n++
			}
		}
		return n
	}
	waitFor(t, id, 5*time.Minute, "the job RUNNING at parallelism 2", func(d statusDoc) bool {
		return atParallelism("2") >= 2 || isEnded(d.Report.State)
	})
	require.GreaterOrEqual(t, atParallelism("2"), 2, containerLogs(id))
	t.Logf("measured: submit -> job running at parallelism 2: %s (load %s); RSS: %s", time.Since(start).Round(time.Second), loadAvgE2E(), rssOfApp(id))
	t0 := time.Now()
	r := yarnAM(t, time.Minute, "scale", id, "3")
	require.Equal(t, 0, r.code, "scale:\n%s", r)
	waitFor(t, id, 4*time.Minute, "the job rescaled to 3", func(d statusDoc) bool {
		return atParallelism("3") >= 3 || isEnded(d.Report.State)
	})
	require.GreaterOrEqual(t, atParallelism("3"), 3, containerLogs(id))
	jobs, err := (&flink.REST{URL: flinkUI(t, id)}).Jobs(context.Background())
	require.NoError(t, err, "the Flink UI status shows answers")
	require.Len(t, jobs, 1)
	assert.Equal(t, "RUNNING", jobs[0].State, "the job runs on after the rescale")
	t.Logf("measured: yarn-am scale 3 -> the job running at parallelism 3: %s (load %s)", time.Since(t0).Round(time.Second), loadAvgE2E())
}

// TestFlinkSessionCluster: without flink.jar the JobManager is a session cluster that runs until
// killed; status shows its web UI, where the TaskManager has registered.
func TestFlinkSessionCluster(t *testing.T) {
	e2eEnv(t)
	job := flinkJob(t, "flink-session", 1, 1, nil, "")
	id := submitDetached(t, job)
	var ui string
	waitFor(t, id, 4*time.Minute, "the session's TaskManager registered", func(d statusDoc) bool {
		if isEnded(d.Report.State) {
			return true
		}
		if ui == "" {
			ui = flinkUI(t, id)
		}
		if ui == "" {
			return false
		}
		tms, err := (&flink.REST{URL: ui}).TaskManagers(context.Background())
		return err == nil && len(tms) == 1
	})
	if d := status(t, id); isEnded(d.Report.State) {
		t.Fatalf("the session cluster ended (%s, %s) instead of running until killed: %s\n%s", d.Report.State, d.Report.FinalStatus, d.Report.Diagnostics, containerLogs(id))
	}
	require.NotEmpty(t, ui, containerLogs(id))
	tms, err := (&flink.REST{URL: ui}).TaskManagers(context.Background())
	require.NoError(t, err, containerLogs(id))
	require.Len(t, tms, 1, "the TaskManager registered with the session JobManager")
	jobs, err := (&flink.REST{URL: ui}).Jobs(context.Background())
	require.NoError(t, err)
	assert.Empty(t, jobs, "a session cluster runs no program of its own")
	assert.Equal(t, "RUNNING", status(t, id).Report.State, "it runs until killed")
}

// TestFlinkGPUShortageIsRefusedByCheck: a [flink] job asking more GPUs per TaskManager than any node
// has is refused by check, naming the key.
func TestFlinkGPUShortageIsRefusedByCheck(t *testing.T) {
	e2eEnv(t)
	job := flinkJob(t, "flink-short", 1, 1, []string{"gpu", "1"}, "")
	r := yarnAM(t, time.Minute, "check", job, "-D", "external-resource.gpu.amount=5")
	assert.Equal(t, 5, r.code, "does not fit (docs/running.md#exit-codes)\n%s", r)
	assert.Contains(t, r.stderr, "external-resource.gpu.amount", r.String())
	r = yarnAM(t, time.Minute, "check", job)
	assert.Equal(t, 0, r.code, "the same job with 1 GPU passes:\n%s", r)
}

// rssOfApp sums up the resident memory of the application's processes on this machine (the mini
// cluster's containers run here) by role: the AM, the JobManager and each TaskManager, found by their
// working directory, which holds the application id.
func rssOfApp(id string) string {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var parts []string
	for _, p := range procs {
		cwd, err := os.Readlink(filepath.Join(p, "cwd"))
		if err != nil || !strings.Contains(cwd, id) {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join(p, "cmdline"))
		role := ""
		switch c := string(cmd); {
		case strings.Contains(c, "TaskManagerRunner"):
			role = "TaskManager"
		case strings.Contains(c, "ClusterEntryPoint") || strings.Contains(c, "ClusterEntrypoint"):
			role = "JobManager"
		case strings.Contains(c, "yarn-am\x00am\x00"):
			role = "AM"
		default:
			continue
		}
		status, _ := os.ReadFile(filepath.Join(p, "status"))
		for _, l := range strings.Split(string(status), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.Atoi(f[1])
				parts = append(parts, fmt.Sprintf("%s %d MiB", role, kb/1024))
			}
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func loadAvgE2E() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(data))[:3], " ")
}
