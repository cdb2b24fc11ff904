//go:build integration

package flink_test

// Flink on yarn-am on the mini cluster (docs/flink.md#integration-design): the real bin/yarn-am
// submits [flink] jobs whose JobManager is the AM's driver and whose TaskExecutors are Flink
// TaskManagers, with the Flink home of make flink-dist and the test job of make flink-job
// (testdata/flink/job). The fake nvidia-smi gives each node GPUs 0-3.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	flink "github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/testkit/e2e"
	"github.com/yarn-am/yarn-am/testkit/itest"
)

// flinkVersion is one Flink line the tests run (docs/flink.md#tested-versions): where its home and the
// test job built against it come from.
type flinkVersion struct {
	homeEnv, jobEnv string // the environment variables that name them (make integration sets the homes)
	cacheDir, jar   string // else make flink-dist's home in yarn-am's cache, make flink-job's jar
	// reactive is what a job on the adaptive scheduler (reactive, or TaskManagers on demand) adds to
	// its [flink.config] on this line for a prompt rescale (docs/flink.md#reactive-scaling).
	reactive string
}

var (
	flink1 = flinkVersion{homeEnv: "YARN_AM_FLINK_HOME", jobEnv: "YARN_AM_FLINK_JOB", cacheDir: "flink-1.20.5", jar: "yarn-am-flink-job.jar"}
	flink2 = flinkVersion{homeEnv: "YARN_AM_FLINK2_HOME", jobEnv: "YARN_AM_FLINK2_JOB", cacheDir: "flink-2.3.0", jar: "yarn-am-flink-job-2.jar",
		reactive: `"jobmanager.adaptive-scheduler.executing.resource-stabilization-timeout" = "0 s"`}
)

// flinkInputs returns Flink 1.20's home and its test job's jar (flinkInputsOf).
func flinkInputs(t *testing.T) (home, jar string) { return flinkInputsOf(t, flink1) }

// flinkInputsOf returns v's Flink home and test job's jar: $<homeEnv> and $<jobEnv>, else where make
// flink-dist and make flink-job put them. A missing one fails the test.
func flinkInputsOf(t *testing.T, v flinkVersion) (home, jar string) {
	t.Helper()
	home = os.Getenv(v.homeEnv)
	if home == "" {
		cache := os.Getenv("YARN_AM_CACHE")
		if cache == "" {
			h, err := os.UserHomeDir()
			require.NoError(t, err)
			cache = filepath.Join(h, ".cache", "yarn-am")
		}
		home = filepath.Join(cache, v.cacheDir)
	}
	jar = os.Getenv(v.jobEnv)
	if jar == "" {
		jar = filepath.Join(itest.Root(), "bin/flink-job", v.jar)
	}
	for _, p := range []string{filepath.Join(home, "lib"), jar} {
		_, err := os.Stat(p)
		require.NoError(t, err, "run 'make flink-dist flink-job' (make integration does)")
	}
	return home, jar
}

// eachFlink runs test once per tested Flink line, as a subtest named by the home's version (1.20.5,
// 2.3.0): both homes must be there, or the test fails.
func eachFlink(t *testing.T, test func(t *testing.T, v flinkVersion)) {
	t.Helper()
	runEachFlink(t, false, test)
}

// eachFlinkAtOnce is eachFlink with the two lines' subtests running at the same time (t.Parallel): for
// a test whose applications share nothing but the cluster and fit on it side by side (at most 3
// TaskManagers × 1 GPU and a JobManager each, of the mini cluster's 2 × 8 GiB and 2 × 4 GPUs), so the
// second line adds what the machine has to spare rather than a whole second run to make test
// (docs/flink.md#what-the-tests-cost). A test that counts the cluster's free resources (a shortage) or
// its processes stays with eachFlink.
func eachFlinkAtOnce(t *testing.T, test func(t *testing.T, v flinkVersion)) {
	t.Helper()
	runEachFlink(t, true, test)
}

// runEachFlink is eachFlink, its subtests parallel when atOnce.
func runEachFlink(t *testing.T, atOnce bool, test func(t *testing.T, v flinkVersion)) {
	t.Helper()
	for _, v := range []flinkVersion{flink1, flink2} {
		t.Run(flinkHomeVersion(t, v), func(t *testing.T) {
			if atOnce {
				t.Parallel()
			}
			test(t, v)
		})
	}
}

// flinkHomeVersion is the Flink version of v's home (flink-dist's jar name), as the subtests are named.
func flinkHomeVersion(t *testing.T, v flinkVersion) string {
	t.Helper()
	home, _ := flinkInputsOf(t, v)
	h, err := flink.OpenHome(home)
	require.NoError(t, err)
	return h.Version
}

// flinkJobOf writes a [flink] job on Flink line v: instances TaskManagers of 1024 MiB with gpus fake
// GPUs and one slot each, v's test job run with args (nil: a session cluster), extra lines in
// [flink.config].
func flinkJobOf(t *testing.T, v flinkVersion, name string, instances, gpus int, args []string, config string) string {
	t.Helper()
	home, jar := flinkInputsOf(t, v)
	program := fmt.Sprintf("jar = %q\nargs = [%s]", jar, "%s")
	if args == nil {
		program = "" // a session cluster
	}
	smi := itest.FakeSMI()
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
`, name, gpus, e2e.CoordinationDir(), home, strings.Replace(program, "%s", strings.Join(quoted, ", "), 1), config, instances, smi)
	p := filepath.Join(t.TempDir(), name+".toml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

// flinkStatus is the part of `yarn-am status --json` these tests read beyond e2e.StatusDoc.
func flinkUI(t *testing.T, id string) string {
	t.Helper()
	r := e2e.YarnAM(t, time.Minute, "status", id, "--json")
	require.Equal(t, 0, r.Code, "status:\n%s", r)
	var d struct {
		AM *contract.Status `json:"am"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &d))
	if d.AM == nil {
		return ""
	}
	for _, l := range d.AM.Links {
		if l.Name == "Flink UI" {
			return l.URL
		}
	}
	return ""
}

var (
	flinkGPULine = regexp.MustCompile(`YARN_AM_FLINK_GPU subtask=(\d+) container=(\S+) indexes=(\S*)`)
	// A TaskManager on the JobManager's host starts its JVM after the JobManager (wait-for-jobmanager).
	flinkWaitLine = regexp.MustCompile(`yarn-am flink-taskmanager: started after the JobManager at (\S+) .*: waited ([0-9.]+) s, (.*)`)
	// ... and prepares it before it waits.
	flinkPreparedThenWaited = regexp.MustCompile(`(?s)yarn-am flink-taskmanager: JVM memory flags .*yarn-am flink-taskmanager: started after the JobManager at `)
	flinkParallism          = regexp.MustCompile(`YARN_AM_FLINK_PARALLELISM subtask=(\d+) parallelism=(\d+) container=(\S+)`)
)

// tmLines returns every match of re in the application's container stdout files and the
// TaskManagers' taskmanager.out (the job's prints, docs/flink.md#logs-that-roll), parts first.
func tmLines(id string, re *regexp.Regexp) [][]string {
	var out [][]string
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
		files, _ := filepath.Glob(filepath.Join(d, id, "*", "stdout"))
		for _, c := range []string{"taskmanager.out.*", "taskmanager.out"} {
			more, _ := filepath.Glob(filepath.Join(d, id, "*", c))
			files = append(files, more...)
		}
		for _, f := range files {
			data, _ := os.ReadFile(f)
			out = append(out, re.FindAllStringSubmatch(string(data), -1)...)
		}
	}
	return out
}

// containerGPUs maps each running container of status to its GPU indexes, joined by ","; nodes maps
// it to its node.
func containerGPUs(d e2e.StatusDoc, nodes map[string]string) map[string]string {
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
// index status shows for its container; no two TaskManagers on one node saw the same GPU. The job
// file has the README's keys and names no GPU driver for Flink: yarn-am gives Flink's GPU driver the
// GPUs it assigned all the same (docs/flink.md#gpus), so no operator sees fewer GPUs than its
// container holds.
func TestFlinkTaskManagersSeeTheirOwnGPUs(t *testing.T) {
	e2e.Env(t)
	eachFlinkAtOnce(t, testFlinkTaskManagersSeeTheirOwnGPUs)
}

func testFlinkTaskManagersSeeTheirOwnGPUs(t *testing.T, v flinkVersion) {
	job := flinkJobOf(t, v, "flink-gpu", 3, 1, []string{"gpu", "3"}, "")
	body, err := os.ReadFile(job)
	require.NoError(t, err)
	noDriver := regexp.MustCompile(`(?m)^"external-resource\.gpu\.driver-factory\.class" = .*\n`)
	require.Regexp(t, noDriver, string(body))
	require.NoError(t, os.WriteFile(job, noDriver.ReplaceAll(body, nil), 0o644))
	start := time.Now()
	id := e2e.SubmitDetached(t, job)
	nodes := map[string]string{}
	d := e2e.WaitFor(t, id, 4*time.Minute, "the TaskManagers' GPUs reported", func(d e2e.StatusDoc) bool {
		return len(containerGPUs(d, nil)) == 3 || e2e.IsEnded(d.Report.State)
	})
	gpus := containerGPUs(d, nodes)
	require.Len(t, gpus, 3, "status: %+v\n%s", d.Report, e2e.ContainerLogs(id))
	ui := flinkUI(t, id)
	assert.Regexp(t, `^http://[^/]+:\d+/flink/$`, ui, "status shows the JobManager's web UI through the AM")
	end := e2e.WaitFor(t, id, 5*time.Minute, "the end", func(d e2e.StatusDoc) bool { return e2e.IsEnded(d.Report.State) })
	t.Logf("measured: submit -> application ended %s (load %s)", time.Since(start).Round(time.Second), loadAvgE2E())
	require.Equal(t, "SUCCEEDED", end.Report.FinalStatus, "diagnostics: %s\n%s", end.Report.Diagnostics, e2e.ContainerLogs(id))
	lines := tmLines(id, flinkGPULine)
	require.Len(t, lines, 3, "three subtasks printed their GPUs:\n%s", e2e.ContainerLogs(id))
	seen := map[string]string{}
	for _, l := range lines {
		require.Contains(t, gpus, l[2], "the subtask ran in a TaskManager status lists")
		assert.Equal(t, gpus[l[2]], l[3], "the operator in %s saw the GPU status shows for it", l[2])
		key := nodes[l[2]] + " gpu " + l[3]
		assert.NotContains(t, seen, key, "two TaskManagers saw %s", key)
		seen[key] = l[2]
	}
	assert.Len(t, seen, 3, "one subtask in each TaskManager, each on its own GPU: %v", seen)
	// The mini cluster's NodeManagers share the AM's host: every TaskManager's JVM started once the
	// JobManager's job had left INITIALIZING, as read through the AM (the JobManager answers the AM
	// alone).
	waits := tmLines(id, flinkWaitLine)
	require.Len(t, waits, 3, "each TaskManager waited for the JobManager on its host:\n%s", e2e.ContainerLogs(id))
	var waited []string
	for _, w := range waits {
		assert.Equal(t, ui, w[1]+"/", "the TaskManager polled the JobManager's UI status shows, through the AM")
		assert.Regexp(t, `^job [0-9a-f]{32} is (CREATED|RUNNING|FINISHED)$`, w[3])
		waited = append(waited, w[2]+" s")
	}
	t.Logf("measured: the TaskManagers waited %s for the JobManager", strings.Join(waited, ", "))
	// Only the JVM waited: its classpath, archive and memory flags were made before.
	assert.Len(t, tmLines(id, flinkPreparedThenWaited), 3, "each TaskManager prepared its JVM before it waited:\n%s", e2e.ContainerLogs(id))
	// jit-late-c2, the default (docs/flink.md#the-jit-at-start): each JVM's own log lists the flags.
	assert.Equal(t, map[string]int{"jobmanager.log": 1, "taskmanager.log": 3}, flinkLogsListing(id, flink.LateC2Flags),
		"the JobManager and each TaskManager started with the late-C2 flags")
}

// flinkLogsListing returns the Flink logs (jobmanager.log, taskmanager.log) of application id whose
// "JVM Options:" list every flag of flags, by the log's file name.
func flinkLogsListing(id string, flags []string) map[string]int {
	out := map[string]int{}
	var listed []*regexp.Regexp
	for _, flag := range flags {
		listed = append(listed, regexp.MustCompile(`(?m)^\S+ \S+ INFO .* -\s+`+regexp.QuoteMeta(flag)+`$`))
	}
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
		for _, name := range []string{"jobmanager.log", "taskmanager.log"} {
			files, _ := filepath.Glob(filepath.Join(d, id, "*", name))
			for _, f := range files {
				data, _ := os.ReadFile(f)
				all := true
				for _, re := range listed {
					all = all && re.Match(data)
				}
				if all {
					out[name]++
				}
			}
		}
	}
	return out
}

// TestFlinkFailingJobFailsWithFlinksRootCause: the application FAILS with Flink's root cause.
func TestFlinkFailingJobFailsWithFlinksRootCause(t *testing.T) {
	e2e.Env(t)
	eachFlinkAtOnce(t, testFlinkFailingJobFailsWithFlinksRootCause)
}

func testFlinkFailingJobFailsWithFlinksRootCause(t *testing.T, v flinkVersion) {
	job := flinkJobOf(t, v, "flink-fail", 1, 1, []string{"fail"}, "")
	r := e2e.YarnAM(t, 6*time.Minute, "submit", job)
	require.NotEqual(t, 0, r.Code, "a failing Flink job fails the submit:\n%s", r)
	id := e2e.SubmittedID(r.Stdout)
	d := e2e.Status(t, id)
	assert.Equal(t, "FAILED", d.Report.FinalStatus)
	assert.Contains(t, d.Report.Diagnostics, "java.lang.IllegalStateException: yarn-am-flink-test deliberate failure in subtask 0",
		"Flink's root cause is the application's diagnostics\n%s", e2e.ContainerLogs(id))
}

// TestFlinkReactiveScaleTwoToThree: with reactive mode, yarn-am scale 2 -> 3 adds a TaskManager and
// the stream job's parallelism follows. The same job shows that submit -D reaches Flink (2 slots per
// TaskManager from -D over the file's 1, seen in Flink's /taskmanagers and in the parallelism) and
// that a lost TaskManager is replaced: its JVM is killed, the AM starts another container within
// taskexecutor.max-failures (also from -D), and the job runs again on three TaskManagers.
func TestFlinkReactiveScaleTwoToThree(t *testing.T) {
	e2e.Env(t)
	eachFlinkAtOnce(t, testFlinkReactiveScaleTwoToThree)
}

func testFlinkReactiveScaleTwoToThree(t *testing.T, v flinkVersion) {
	job := flinkJobOf(t, v, "flink-reactive", 2, 1, []string{"stream"}, `"scheduler-mode" = "reactive"
"jobmanager.adaptive-scheduler.scaling-interval.min" = "0 s"
"restart-strategy.type" = "fixed-delay"
"restart-strategy.fixed-delay.attempts" = 100
"restart-strategy.fixed-delay.delay" = "1 s"
`+v.reactive)
	start := time.Now()
	id := e2e.SubmitDetached(t, job, "-D", "taskmanager.numberOfTaskSlots=2", "-Dtaskexecutor.max-failures=2")
	atParallelism := func(p string) int {
		n := 0
		for _, l := range tmLines(id, flinkParallism) {
			if l[2] == p {
				n++
			}
		}
		return n
	}
	e2e.WaitFor(t, id, 5*time.Minute, "the job RUNNING at parallelism 4 (2 TaskManagers × 2 slots)", func(d e2e.StatusDoc) bool {
		return atParallelism("4") >= 4 || e2e.IsEnded(d.Report.State)
	})
	require.GreaterOrEqual(t, atParallelism("4"), 4, e2e.ContainerLogs(id))
	rest := &flink.REST{URL: flinkUI(t, id)}
	tms, err := rest.TaskManagers(context.Background())
	require.NoError(t, err, "the Flink UI status shows answers")
	require.Len(t, tms, 2)
	for _, tm := range tms {
		assert.Equal(t, 2, tm.Slots, "-D taskmanager.numberOfTaskSlots=2 wins over [flink.config] (docs/flink.md#configuration)")
	}
	t.Logf("measured: submit -> job running at parallelism 4: %s (load %s); RSS: %s", time.Since(start).Round(time.Second), loadAvgE2E(), rssOfApp(id))
	t0 := time.Now()
	r := e2e.YarnAM(t, time.Minute, "scale", id, "3")
	require.Equal(t, 0, r.Code, "scale:\n%s", r)
	e2e.WaitFor(t, id, 4*time.Minute, "the job rescaled to 6", func(d e2e.StatusDoc) bool {
		return atParallelism("6") >= 6 || e2e.IsEnded(d.Report.State)
	})
	require.GreaterOrEqual(t, atParallelism("6"), 6, e2e.ContainerLogs(id))
	jobs, err := rest.Jobs(context.Background())
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	assert.Equal(t, "RUNNING", jobs[0].State, "the job runs on after the rescale")
	t.Logf("measured: yarn-am scale 3 -> the job running at parallelism 6: %s (load %s)", time.Since(t0).Round(time.Second), loadAvgE2E())

	// A lost TaskManager: SIGKILL one TaskManager's JVM.
	before := e2e.Status(t, id)
	running := map[string]bool{}
	for _, c := range before.AM.Containers {
		if c.State == "RUNNING" {
			running[c.ID] = true
		}
	}
	require.Len(t, running, 3, "three TaskManagers run")
	var victim string
	for c := range running {
		victim = c
		break
	}
	pid := taskManagerPID(victim)
	require.NotZero(t, pid, "the TaskManager JVM of %s is found by its working directory", victim)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	t1 := time.Now()
	var replacement string
	e2e.WaitFor(t, id, 4*time.Minute, "a replacement TaskManager running the job at parallelism 6", func(d e2e.StatusDoc) bool {
		if e2e.IsEnded(d.Report.State) {
			return true
		}
		for _, c := range d.AM.Containers {
			if c.State == "RUNNING" && !running[c.ID] {
				replacement = c.ID
			}
		}
		if replacement == "" {
			return false
		}
		for _, l := range tmLines(id, flinkParallism) {
			if l[3] == replacement && l[2] == "6" {
				return true
			}
		}
		return false
	})
	require.NotEmpty(t, replacement, "the AM replaced the lost container\n%s", e2e.ContainerLogs(id))
	d := e2e.Status(t, id)
	assert.Equal(t, "RUNNING", d.Report.State)
	assert.Equal(t, 1, d.AM.Counts.Failed, "the killed TaskManager counts as one failure, within max-failures")
	require.Eventually(t, func() bool {
		jobs, err := rest.Jobs(context.Background())
		tms, terr := rest.TaskManagers(context.Background())
		return err == nil && terr == nil && len(jobs) == 1 && jobs[0].State == "RUNNING" && len(tms) == 3
	}, 2*time.Minute, time.Second, "Flink's REST API: the job RUNNING on three TaskManagers again")
	t.Logf("measured: TaskManager SIGKILL -> replacement running the job at parallelism 6: %s (load %s)", time.Since(t1).Round(time.Second), loadAvgE2E())
}

// taskManagerPID finds the TaskManager JVM of a container among this machine's processes (the mini
// cluster's containers run here) by its working directory; 0 when there is none.
func taskManagerPID(container string) int {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		cwd, err := os.Readlink(filepath.Join(p, "cwd"))
		if err != nil || filepath.Base(cwd) != container {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join(p, "cmdline"))
		if strings.Contains(string(cmd), "TaskManagerRunner") {
			pid, _ := strconv.Atoi(filepath.Base(p))
			return pid
		}
	}
	return 0
}

// TestFlinkRunTimeShortageIsReported: three TaskManagers × 4 GPUs on two nodes of 4 GPUs pass check
// (each fits a node) but only two can run; while the JobManager waits for the third's slot, the AM
// reports not-enough-resources with its evidence, and status shows it. On each tested Flink line.
func TestFlinkRunTimeShortageIsReported(t *testing.T) {
	e2e.Env(t)
	eachFlink(t, testFlinkRunTimeShortageIsReported)
}

func testFlinkRunTimeShortageIsReported(t *testing.T, v flinkVersion) {
	job := flinkJobOf(t, v, "flink-shortage", 3, 4, []string{"gpu", "3"}, "")
	r := e2e.YarnAM(t, time.Minute, "check", job)
	require.Equal(t, 0, r.Code, "each TaskManager fits a node: check passes\n%s", r)
	id := e2e.SubmitDetached(t, job, "-D", "policy.pending-timeout=5s")
	var ev *shortageEvent
	e2e.WaitFor(t, id, 4*time.Minute, "a not-enough-resources event", func(d e2e.StatusDoc) bool {
		ev = notEnoughResources(t, id)
		return ev != nil || e2e.IsEnded(d.Report.State)
	})
	require.NotNil(t, ev, "status: %+v\n%s", e2e.Status(t, id).Report, e2e.ContainerLogs(id))
	require.NotNil(t, ev.Evidence, "the event carries its evidence: %+v", ev)
	assert.Equal(t, 1, ev.Evidence.Pending, "one TaskManager cannot be placed")
	assert.EqualValues(t, 4, ev.Evidence.Asked["yarn.io/gpu"])
	assert.EqualValues(t, 8, ev.Evidence.ClusterTotal["yarn.io/gpu"])
	// Meanwhile Flink waits for the third slot: the job has not ended, two TaskManagers registered.
	rest := &flink.REST{URL: flinkUI(t, id)}
	require.Eventually(t, func() bool {
		tms, err := rest.TaskManagers(context.Background())
		return err == nil && len(tms) == 2
	}, 3*time.Minute, time.Second, "two TaskManagers registered")
	jobs, err := rest.Jobs(context.Background())
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	assert.NotContains(t, []string{"FINISHED", "FAILED", "CANCELED"}, jobs[0].State, "the JobManager waits for slots")
	st := e2e.YarnAM(t, time.Minute, "status", id)
	require.Equal(t, 0, st.Code, st.String())
	assert.Contains(t, st.Stdout, "not-enough-resources", "status shows the shortage\n%s", st)
}

// TestFlinkTaskManagerFailuresPastTheLimitEndTheApplication: TaskManagers that cannot start (their
// JVM cannot load a -javaagent; the mini cluster's JDK_JAVA_OPTIONS ignore unknown -XX options) are not replaced past taskexecutor.max-failures; the AM then stops the
// JobManager, which would wait for them, and the application FAILS with the limit's diagnostics. On
// each tested Flink line.
func TestFlinkTaskManagerFailuresPastTheLimitEndTheApplication(t *testing.T) {
	e2e.Env(t)
	eachFlinkAtOnce(t, testFlinkTaskManagerFailuresPastTheLimitEndTheApplication)
}

func testFlinkTaskManagerFailuresPastTheLimitEndTheApplication(t *testing.T, v flinkVersion) {
	job := flinkJobOf(t, v, "flink-tm-fail", 1, 1, []string{"gpu", "1"}, "")
	r := e2e.YarnAM(t, 6*time.Minute, "submit", job, "-D", "taskexecutor.env.JAVA_TOOL_OPTIONS=-javaagent:/yarn-am-no-such-agent.jar")
	require.NotEqual(t, 0, r.Code, "the application fails:\n%s", r)
	id := e2e.SubmittedID(r.Stdout)
	d := e2e.Status(t, id)
	assert.Equal(t, "FAILED", d.Report.FinalStatus)
	assert.Contains(t, d.Report.Diagnostics, "more than taskexecutor.max-failures = 0 allows", e2e.ContainerLogs(id))
	assert.Contains(t, d.Report.Diagnostics, "was stopped", "the AM stopped the JobManager")
}

// shortageEvent is the part of a not-enough-resources event these tests read.
type shortageEvent struct {
	Type     string `json:"type"`
	Message  string `json:"message"`
	Evidence *struct {
		Pending      int              `json:"pending"`
		Asked        map[string]int64 `json:"asked"`
		ClusterTotal map[string]int64 `json:"clusterTotal"`
	} `json:"evidence"`
}

// notEnoughResources returns the application's latest not-enough-resources event from status
// --json, or nil.
func notEnoughResources(t *testing.T, id string) *shortageEvent {
	t.Helper()
	r := e2e.YarnAM(t, time.Minute, "status", id, "--json")
	require.Equal(t, 0, r.Code, "status:\n%s", r)
	var d struct {
		AM *struct {
			Events []shortageEvent `json:"events"`
		} `json:"am"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &d))
	if d.AM == nil {
		return nil
	}
	var last *shortageEvent
	for i := range d.AM.Events {
		if d.AM.Events[i].Type == "not-enough-resources" {
			last = &d.AM.Events[i]
		}
	}
	return last
}

// waitSessionTaskManager waits until a session cluster's one TaskManager has registered, read through
// the AM's proxy, or the application ended, and returns the Flink UI's URL through the AM ("" when
// the application ended before it had one).
func waitSessionTaskManager(t *testing.T, id string) string {
	t.Helper()
	var ui string
	e2e.WaitFor(t, id, 4*time.Minute, "the session's TaskManager registered, read through the AM", func(d e2e.StatusDoc) bool {
		if e2e.IsEnded(d.Report.State) {
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
	return ui
}

// TestFlinkSessionCluster: without flink.jar the JobManager is a session cluster that runs until
// killed; status shows its web UI, through the AM, where the TaskManager has registered. With
// [flink] web-submit = true its owner uploads and runs a jar through the AM, and nobody else reaches
// it (jobManagerClosedToStrangers); a stranger's crawl of everything the AM answers anonymously finds
// no secret, -D value, stderr line, launch script or bound port, and every acting or file-serving
// path refuses (strangerCrawl).
func TestFlinkSessionCluster(t *testing.T) {
	e2e.Env(t)
	eachFlinkAtOnce(t, testFlinkSessionCluster)
}

func testFlinkSessionCluster(t *testing.T, v flinkVersion) {
	job := flinkJobOf(t, v, "flink-session", 1, 1, nil, "")
	body, err := os.ReadFile(job)
	require.NoError(t, err)
	cs := newCrawlSession(t) // what the stranger's crawl looks for (flink_crawl_integration_test.go)
	require.NoError(t, os.WriteFile(job, cs.jobText(bytes.Replace(body, []byte("[flink]\n"), []byte("[flink]\nweb-submit = true\n"), 1)), 0o644))
	id := e2e.SubmitDetached(t, append([]string{job}, cs.defines()...)...)
	ui := waitSessionTaskManager(t, id)
	if d := e2e.Status(t, id); e2e.IsEnded(d.Report.State) {
		t.Fatalf("the session cluster ended (%s, %s) instead of running until killed: %s\n%s", d.Report.State, d.Report.FinalStatus, d.Report.Diagnostics, e2e.ContainerLogs(id))
	}
	require.NotEmpty(t, ui, e2e.ContainerLogs(id))
	tms, err := (&flink.REST{URL: ui}).TaskManagers(context.Background())
	require.NoError(t, err, e2e.ContainerLogs(id))
	require.Len(t, tms, 1, "the TaskManager registered with the session JobManager")
	jobs, err := (&flink.REST{URL: ui}).Jobs(context.Background())
	require.NoError(t, err)
	assert.Empty(t, jobs, "a session cluster runs no program of its own")
	waits := tmLines(id, flinkWaitLine)
	require.Len(t, waits, 1, "the TaskManager waited for the session JobManager on its host:\n%s", e2e.ContainerLogs(id))
	assert.Equal(t, "its REST API answers", waits[0][3])
	// Fewer TaskManagers would stop its jobs' tasks: scale refuses, saying what would work.
	r := e2e.YarnAM(t, time.Minute, "scale", id, "0")
	assert.Equal(t, 1, r.Code, "scale 1 -> 0 of a session cluster:\n%s", r)
	assert.Contains(t, r.Stderr, "a session cluster's TaskManagers run the tasks of its jobs")
	assert.Equal(t, 1, e2e.Status(t, id).AM.Requirement.Instances, "the requirement did not change")
	assert.Equal(t, "RUNNING", e2e.Status(t, id).Report.State, "it runs until killed")
	_, jar := flinkInputsOf(t, v)
	jobManagerClosedToStrangers(t, id, ui, jar)
	strangerCrawl(t, id, ui, cs)
}

// TestFlinkScaleOfAFixedJobIsRefused: a streaming job whose parallelism is fixed (not reactive) would
// fail if yarn-am scale took a TaskManager away; the scale is refused with what would work, and the
// job runs on unharmed. On each tested Flink line.
func TestFlinkScaleOfAFixedJobIsRefused(t *testing.T) {
	e2e.Env(t)
	eachFlinkAtOnce(t, testFlinkScaleOfAFixedJobIsRefused)
}

func testFlinkScaleOfAFixedJobIsRefused(t *testing.T, v flinkVersion) {
	job := flinkJobOf(t, v, "flink-fixed", 1, 1, []string{"stream"}, "")
	id := e2e.SubmitDetached(t, job)
	t.Cleanup(func() { e2e.YarnAM(t, time.Minute, "kill", id) })
	var rest *flink.REST
	e2e.WaitFor(t, id, 4*time.Minute, "the stream job RUNNING", func(d e2e.StatusDoc) bool {
		if e2e.IsEnded(d.Report.State) {
			return true
		}
		if rest == nil {
			if ui := flinkUI(t, id); ui != "" {
				rest = &flink.REST{URL: ui}
			}
			return false
		}
		jobs, err := rest.Jobs(context.Background())
		return err == nil && len(jobs) == 1 && jobs[0].State == "RUNNING"
	})
	require.NotNil(t, rest, e2e.ContainerLogs(id))
	r := e2e.YarnAM(t, time.Minute, "scale", id, "0")
	assert.Equal(t, 1, r.Code, "scale 1 -> 0 of a fixed job:\n%s", r)
	assert.Contains(t, r.Stderr, "TaskManagers would fail the job")
	assert.Contains(t, r.Stderr, `"scheduler-mode" = "reactive"`)
	d := e2e.Status(t, id)
	assert.Equal(t, 1, d.AM.Requirement.Instances, "the requirement did not change")
	assert.Equal(t, "RUNNING", d.Report.State)
	jobs, err := rest.Jobs(context.Background())
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	assert.Equal(t, "RUNNING", jobs[0].State, "the job runs on")
}

// TestFlinkGPUShortageIsRefusedByCheck: a [flink] job asking more GPUs per TaskManager than any node
// has is refused by check, naming the key. On each tested Flink line.
func TestFlinkGPUShortageIsRefusedByCheck(t *testing.T) {
	e2e.Env(t)
	eachFlink(t, testFlinkGPUShortageIsRefusedByCheck)
}

func testFlinkGPUShortageIsRefusedByCheck(t *testing.T, v flinkVersion) {
	job := flinkJobOf(t, v, "flink-short", 1, 1, []string{"gpu", "1"}, "")
	r := e2e.YarnAM(t, time.Minute, "check", job, "-D", "external-resource.gpu.amount=5")
	assert.Equal(t, 5, r.Code, "does not fit (docs/running.md#exit-codes)\n%s", r)
	assert.Contains(t, r.Stderr, "external-resource.gpu.amount", r.String())
	r = e2e.YarnAM(t, time.Minute, "check", job)
	assert.Equal(t, 0, r.Code, "the same job with 1 GPU passes:\n%s", r)
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

// TestFlinkStartupFailureReachesTheDiagnostics: a JobManager that fails before its job runs, in ways
// check cannot see, FAILS the application with Flink's own exception as the driver's last error, read
// from jobmanager.log (docs/flink.md#when-the-jobmanager-fails-to-start): the test job's main throws
// before it submits a job (an unknown mode), so the JobManager exits with no job on its REST API; and a
// checkpoint directory of a scheme Flink cannot load fails the job as its JobMaster starts. The RM's
// diagnostics point the owner to the driver's stderr (docs/running.md#modes-batch-service-driver), am.stderr. On
// each tested Flink line (on 2.3 the main that throws fails Flink's application, whose root cause the
// driver reads from the REST API: TestFlink2ApplicationWhoseMainThrowsFails).
func TestFlinkStartupFailureReachesTheDiagnostics(t *testing.T) {
	e2e.Env(t)
	eachFlinkAtOnce(t, testFlinkStartupFailureReachesTheDiagnostics)
}

func testFlinkStartupFailureReachesTheDiagnostics(t *testing.T, v flinkVersion) {
	for _, tc := range []struct {
		name    string
		args    []string
		defines []string
		want    string
	}{
		{"flink-bad-main", []string{"no-such-mode"}, nil, "java.lang.IllegalArgumentException: unknown mode no-such-mode"},
		// The innermost cause: the driver's line carries it whichever way the failure is read, from the
		// job's exceptions once the job exists (its root cause) or from jobmanager.log before, whose head
		// is Flink's UnsupportedFileSystemSchemeException (docs/flink.md#when-the-jobmanager-fails-to-start).
		{"flink-bad-scheme", []string{"gpu", "1"}, []string{"-D", "state.checkpoints.dir=foo://x/checkpoints", "-D", "execution.checkpointing.interval=1s"},
			`org.apache.hadoop.fs.UnsupportedFileSystemException: No FileSystem for scheme "foo"`},
	} {
		job := flinkJobOf(t, v, tc.name, 1, 1, tc.args, "")
		r := e2e.YarnAM(t, 6*time.Minute, append([]string{"submit", job}, tc.defines...)...)
		require.NotEqual(t, 0, r.Code, "the job cannot start:\n%s", r)
		id := e2e.SubmittedID(r.Stdout)
		d := e2e.Status(t, id)
		assert.Equal(t, "FAILED", d.Report.FinalStatus, tc.name)
		assert.Contains(t, d.Report.Diagnostics, `the driver "./yarn-am flink-jobmanager" exited with code 1`, tc.name)
		stderr := flinkDriverStderr(id)
		assert.Regexp(t, `(?m)^yarn-am flink-jobmanager: .*`+regexp.QuoteMeta(tc.want), stderr,
			"%s: the driver's last error is the JobManager's exception\n%s", tc.name, stderr)
		assert.NotContains(t, stderr, "Picked up JDK_JAVA_OPTIONS", "%s: the JVM's notices are not the failure", tc.name)
	}
}

// flinkDriverStderr is the AM container's am.stderr, where the driver's stderr goes.
func flinkDriverStderr(id string) string {
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

// TestFlinkCheckRefusesParallelismAndWarnsOfATypo: check refuses a parallelism above the slots the
// TaskManagers will have, naming -D as where it was set, and warns of a Flink key that is a near miss
// of one the home's Flink declares (docs/flink.md#what-check-refuses). On each tested Flink line.
func TestFlinkCheckRefusesParallelismAndWarnsOfATypo(t *testing.T) {
	e2e.Env(t)
	eachFlink(t, testFlinkCheckRefusesParallelismAndWarnsOfATypo)
}

func testFlinkCheckRefusesParallelismAndWarnsOfATypo(t *testing.T, v flinkVersion) {
	job := flinkJobOf(t, v, "flink-check", 2, 1, []string{"gpu", "2"}, "")
	r := e2e.YarnAM(t, time.Minute, "check", job, "-D", "parallelism.default=4")
	assert.NotEqual(t, 0, r.Code, "4 subtasks on 2 slots:\n%s", r)
	assert.Contains(t, r.Stderr, "parallelism.default = 4 (from -D parallelism.default=4): more than the 2 slots the job will have", r.String())
	r = e2e.YarnAM(t, time.Minute, "check", job, "-D", "taskmanager.numberOfTaskSlot=2")
	assert.Equal(t, 0, r.Code, "a typo is a warning, not a refusal:\n%s", r)
	assert.Contains(t, r.Stderr, `warning: Flink key "taskmanager.numberOfTaskSlot" (from -D taskmanager.numberOfTaskSlot=2) is not a key of Flink `+flinkHomeVersion(t, v)+` (did you mean "taskmanager.numberOfTaskSlots"?)`, r.String())
	body, err := os.ReadFile(job)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(job, []byte(strings.Replace(string(body), "\njar = ", "\nmain-class = \"yarnam.flinkjob.Jbo\"\njar = ", 1)), 0o644))
	r = e2e.YarnAM(t, time.Minute, "check", job)
	assert.NotEqual(t, 0, r.Code, "a main class the jar lacks:\n%s", r)
	assert.Contains(t, r.Stderr, `has no yarnam/flinkjob/Jbo.class (did you mean "yarnam.flinkjob.Job"?)`, r.String())
}

// TestFlinkQuickStartAsWritten runs docs/flink.md's quick start as the page writes it, on each tested
// Flink line: the job file it shows is testdata/jobs/flink2-gpu.toml (Flink 2.3.0) byte for byte, and
// testdata/jobs/flink-gpu.toml (Flink 1.20.5) is that file with the [flink] table the page shows for
// 1.20.5; the page's bin/yarn-am commands run from the repository root in order, with the line's file:
// check says OK, submit ends SUCCEEDED, and logs shows each of the two TaskManagers' operators the GPU
// index status showed for its container.
func TestFlinkQuickStartAsWritten(t *testing.T) {
	e2e.Env(t)
	page := e2e.QSReadPage(t, "docs/flink.md")
	section := page[strings.Index(page, "## Quick start"):]
	section = section[:strings.Index(section[3:], "\n## ")+3]
	const rel2, rel1 = "testdata/jobs/flink2-gpu.toml", "testdata/jobs/flink-gpu.toml"
	var shown, shown1 bool
	for _, b := range e2e.QSBlocks(t, section) {
		if b.Caption == "[`"+rel2+"`](../"+rel2+"):" {
			assert.Equal(t, e2e.QSReadPage(t, rel2), b.Body, "the page's job file is %s", rel2)
			shown = true
		}
		if b.Info == "toml" && strings.HasPrefix(b.Body, "[flink]\n") && strings.Contains(b.Body, "flink-1.20.5") {
			// The 2.3.0 file with its [flink] table (up to the blank line) replaced by the page's.
			f2 := e2e.QSReadPage(t, rel2)
			from := strings.Index(f2, "[flink]\n")
			to := from + strings.Index(f2[from:], "\n\n") + 1
			assert.Equal(t, f2[:from]+b.Body+f2[to:], e2e.QSReadPage(t, rel1), "%s is %s with the page's [flink] table for 1.20.5", rel1, rel2)
			shown1 = true
		}
	}
	require.True(t, shown, "the quick start shows %s", rel2)
	require.True(t, shown1, "the quick start shows the [flink] table of %s", rel1)
	require.Equal(t, []string{"check " + rel2, "submit " + rel2, "logs APP --file taskmanager.out"}, e2e.QSPageCommands(t, section))
	eachFlinkAtOnce(t, func(t *testing.T, v flinkVersion) {
		rel := rel2
		if v == flink1 {
			rel = rel1
		}
		testFlinkQuickStartAsWritten(t, rel)
	})
}

func testFlinkQuickStartAsWritten(t *testing.T, rel string) {
	r := e2e.QSRun(t, 2*time.Minute, []string{"check", rel})
	require.Equal(t, 0, r.Code, "check:\n%s", r)
	assert.Contains(t, r.Stdout, "OK")
	r = e2e.QSRun(t, 6*time.Minute, []string{"submit", rel})
	id := e2e.SubmittedID(r.Stdout)
	require.NotEmpty(t, id, "submit printed no application id:\n%s", r)
	t.Cleanup(func() { e2e.KillQuietly(id) })
	require.Equal(t, 0, r.Code, "submit:\n%s\n%s", r, e2e.ContainerLogs(id))
	assert.Contains(t, r.Stdout, "final status SUCCEEDED")
	d := e2e.Status(t, id)
	gpus := containerGPUs(d, nil)
	deadline := time.Now().Add(time.Minute)
	for {
		r = e2e.QSRun(t, time.Minute, []string{"logs", id, "--file", "taskmanager.out"})
		var seen []string
		for _, s := range e2e.QSLogSections(r.Stdout) {
			for _, l := range s.Lines {
				if m := flinkGPULine.FindStringSubmatch(l); m != nil {
					seen = append(seen, m[2]+"="+m[3])
					if want, ok := gpus[m[2]]; ok {
						assert.Equal(t, want, m[3], "the operator in %s saw the GPU status shows", m[2])
					}
				}
			}
		}
		if r.Code == 0 && len(seen) == 2 {
			t.Logf("the operators saw: %v", seen)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("logs did not show two operators' GPU lines (saw %v):\n%s", seen, r)
		}
		time.Sleep(2 * time.Second) // the NodeManagers may still be uploading the logs (the page says so for logs)
	}
}
