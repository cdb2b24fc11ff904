//go:build flink

package flinkdist

// Against a real Flink, on this machine, without YARN (make test-flink-local; docs/flink.md#tests):
// a JobManager and TaskManagers started from this package's command lines, every server on loopback.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

type flinkEnv struct {
	home *Home
	jar  string
}

func needFlink(t *testing.T) flinkEnv {
	t.Helper()
	dir, jar := os.Getenv("YARN_AM_FLINK_HOME"), os.Getenv("YARN_AM_FLINK_JOB")
	if dir == "" || jar == "" {
		t.Fatal("YARN_AM_FLINK_HOME and YARN_AM_FLINK_JOB must be set: run make test-flink-local")
	}
	h, err := OpenHome(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(jar); err != nil {
		t.Fatal(err)
	}
	return flinkEnv{home: h, jar: jar}
}

// needFlinkHome is the Flink home of $YARN_AM_FLINK_HOME, for the tests that run only Flink's tools
// (BashJavaUtils, the key scan), not a job: make test-flink-memory runs them against each Flink
// version the tests install.
func needFlinkHome(t *testing.T) *Home {
	t.Helper()
	dir := os.Getenv("YARN_AM_FLINK_HOME")
	if dir == "" {
		t.Fatal("YARN_AM_FLINK_HOME must be set: run make test-flink-local or make test-flink-memory")
	}
	h, err := OpenHome(dir)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// workDir is the test's directory: a temporary one, or one under $YARN_AM_FLINK_KEEP when set (the
// processes' logs and stdout are kept there for a look afterwards).
func workDir(t *testing.T) string {
	keep := os.Getenv("YARN_AM_FLINK_KEEP")
	if keep == "" {
		return t.TempDir()
	}
	dir := filepath.Join(keep, t.Name())
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// cluster is one local Flink cluster's configuration: the home's, then the keys a job file would
// give (loopback addresses, the GPU resource), as yarn-am layers them.
func clusterConf(t *testing.T, fe flinkEnv, slots, gpus int) (*Config, string) {
	t.Helper()
	base, src, err := fe.home.Config()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Flink %s configuration from %s", fe.home.Version, src)
	restPort, rpcPort := freePort(t), freePort(t)
	job := NewConfig()
	for k, v := range map[string]string{
		// One literal for the JobManager's address on both sides (docs/flink.md#addresses).
		KeyRPCAddress:                                "127.0.0.1",
		"jobmanager.rpc.port":                        strconv.Itoa(rpcPort),
		"jobmanager.bind-host":                       "127.0.0.1",
		"rest.address":                               "127.0.0.1",
		"rest.bind-address":                          "127.0.0.1",
		"rest.port":                                  strconv.Itoa(restPort),
		"taskmanager.host":                           "127.0.0.1",
		"taskmanager.bind-host":                      "127.0.0.1",
		"taskmanager.numberOfTaskSlots":              strconv.Itoa(slots),
		"execution.shutdown-on-application-finish":   "false",
		keyExternalRes:                               "gpu",
		"external-resource.gpu.amount":               strconv.Itoa(gpus),
		"external-resource.gpu.driver-factory.class": gpuDriverFactory,
		"external-resource.gpu.yarn.config-key":      "yarn.io/gpu",
	} {
		job.Set(k, v)
	}
	base.Merge(job)
	if err := base.ApplyDefines([]string{"parallelism.default=1"}); err != nil {
		t.Fatal(err)
	}
	return base, "http://127.0.0.1:" + strconv.Itoa(restPort)
}

type running struct {
	name   string
	cmd    *exec.Cmd
	stdout string
	exited chan struct{} // closed when the process has ended; err is then its end
	err    error
}

func start(t *testing.T, name string, p *Process, dir string, extraEnv ...string) *running {
	t.Helper()
	out, err := os.Create(filepath.Join(dir, name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(p.Argv[0], p.Argv[1:]...)
	cmd.Env = append(append(os.Environ(), p.Env...), extraEnv...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Dir = dir
	// Should the test binary itself be killed (a go test timeout), the JVMs go with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &running{name: name, cmd: cmd, stdout: out.Name(), exited: make(chan struct{})}
	go func() { r.err = cmd.Wait(); out.Close(); close(r.exited) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// stop ends the process: SIGTERM (Flink shuts down cleanly), then SIGKILL after 15 s.
func (r *running) stop(t *testing.T) {
	select {
	case <-r.exited:
		return
	default:
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
	case <-time.After(15 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.exited
		t.Logf("%s did not stop on SIGTERM within 15 s; killed", r.name)
	}
}

// loadAvg is the machine's 1-minute load average: the timings measured here depend on it.
func loadAvg() string {
	data, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

// rssMiB is the process's resident set size (VmRSS).
func (r *running) rssMiB() int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", r.cmd.Process.Pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			kb, _ := strconv.Atoi(f[0])
			return kb / 1024
		}
	}
	return -1
}

// waitFor polls cond every 100 ms until it is true, one of procs ends, or 90 s pass.
func waitFor(t *testing.T, what string, procs []*running, cond func() (bool, error)) time.Duration {
	t.Helper()
	start := time.Now()
	var last error
	for time.Since(start) < 90*time.Second {
		for _, p := range procs {
			select {
			case <-p.exited:
				t.Fatalf("waiting for %s: %s ended: %v; its output ends:\n%s", what, p.name, p.err, fileTail(p.stdout))
			default:
			}
		}
		ok, err := cond()
		if ok {
			return time.Since(start)
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("gave up waiting 90 s for %s (last error: %v)", what, last)
	return 0
}

func fileTail(path string) string {
	data, _ := os.ReadFile(path)
	return tail(string(data), 3000)
}

func prepare(t *testing.T, role Role, s Spec) *Process {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := Prepare(ctx, role, s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func jobByState(t *testing.T, rest *REST, states ...string) func() (bool, error) {
	return func() (bool, error) {
		jobs, err := rest.Jobs(context.Background())
		if err != nil {
			return false, err
		}
		for _, j := range jobs {
			for _, s := range states {
				if j.State == s {
					return true, nil
				}
			}
		}
		return false, fmt.Errorf("jobs %v", jobs)
	}
}

// TestFlinkGPUIndexes: an application cluster, 2 TaskManagers x 2 slots x 2 fake GPUs with distinct
// indexes; the job's 4 subtasks each print the indexes getExternalResourceInfos("gpu") returned, and
// every TaskManager's subtasks saw exactly its own.
func TestFlinkGPUIndexes(t *testing.T) {
	fe := needFlink(t)
	dir := workDir(t)
	conf, restURL := clusterConf(t, fe, 2, 2)
	rest := &REST{URL: restURL}

	jmDir := filepath.Join(dir, "jm")
	os.MkdirAll(jmDir, 0o755)
	jm := prepare(t, RoleApplication, Spec{Home: fe.home, Conf: conf, Dir: jmDir, LogDir: jmDir, MemoryMiB: 768,
		UserJars: []string{fe.jar}, MainClass: "yarnam.flinkjob.Job", Args: []string{"gpu", "4"}})
	t.Logf("JobManager: %s", jm.CommandLine())
	jmStart := time.Now()
	jmRun := start(t, "jobmanager", jm, jmDir)
	restUp := waitFor(t, "the JobManager's REST API", []*running{jmRun}, func() (bool, error) {
		_, err := rest.TaskManagers(context.Background())
		return err == nil, err
	})

	assigned := map[string][]string{"container_tm_0": {"0", "1"}, "container_tm_1": {"2", "3"}}
	var tms []*running
	var names []string
	for name := range assigned {
		names = append(names, name)
	}
	sort.Strings(names)
	tmStart := time.Now()
	for _, name := range names {
		tmDir := filepath.Join(dir, name)
		os.MkdirAll(tmDir, 0o755)
		tm := prepare(t, RoleTaskManager, Spec{Home: fe.home, Conf: conf, Dir: tmDir, LogDir: tmDir, MemoryMiB: 1024,
			GPUs: map[string][]string{"gpu": assigned[name]}, UserJars: []string{fe.jar}})
		// YARN sets CONTAINER_ID in every container; the job prints it.
		tms = append(tms, start(t, name, tm, tmDir, "CONTAINER_ID="+name))
	}
	tmPrepared := time.Since(tmStart)
	t.Logf("TaskManager: %s", strings.Join(tms[0].cmd.Args, " "))
	all := append([]*running{jmRun}, tms...)
	registered := waitFor(t, "2 registered TaskManagers", all, func() (bool, error) {
		list, err := rest.TaskManagers(context.Background())
		return err == nil && len(list) == 2, err
	})
	waitFor(t, "the job FINISHED", all, jobByState(t, rest, "FINISHED", "FAILED", "CANCELED"))
	jobs, err := rest.Jobs(context.Background())
	if err != nil || len(jobs) != 1 || jobs[0].State != "FINISHED" {
		t.Fatalf("jobs %v (%v); JobManager log ends:\n%s", jobs, err, fileTail(jm.LogFile))
	}
	t.Logf("load average %s", loadAvg())
	t.Logf("measured: JobManager REST up %v after its start; the 2 TaskManagers prepared (BashJavaUtils, one after the other) and started in %v, registered %v later; job FINISHED %v after the JobManager's start",
		restUp.Round(time.Millisecond), tmPrepared.Round(time.Millisecond), registered.Round(time.Millisecond), time.Since(jmStart).Round(time.Millisecond))
	t.Logf("measured RSS: JobManager %d MiB, TaskManagers %d and %d MiB", jmRun.rssMiB(), tms[0].rssMiB(), tms[1].rssMiB())

	subtasks := map[string]bool{}
	for i, name := range names {
		lines := gpuLines(t, tms[i].stdout)
		if len(lines) == 0 {
			t.Errorf("%s ran no subtask; its output ends:\n%s", name, fileTail(tms[i].stdout))
		}
		for _, l := range lines {
			if l.container != name {
				t.Errorf("%s's stdout has a line of container %q: %+v", name, l.container, l)
			}
			if want := strings.Join(assigned[name], ","); l.indexes != want {
				t.Errorf("%s subtask %s saw GPU indexes %q, yarn-am assigned %q", name, l.subtask, l.indexes, want)
			}
			if subtasks[l.subtask] {
				t.Errorf("subtask %s reported twice", l.subtask)
			}
			subtasks[l.subtask] = true
		}
	}
	if len(subtasks) != 4 {
		t.Errorf("%d subtasks reported their GPUs, want 4", len(subtasks))
	}
	// The driver ran our script, not nvidia-smi: its log names the indexes it discovered.
	for _, name := range names {
		tmLog := filepath.Join(dir, name, "taskmanager.log")
		data, _ := os.ReadFile(tmLog)
		if !strings.Contains(string(data), "Discover GPU resources") {
			t.Errorf("%s: the GPU driver logged no discovery in %s", name, tmLog)
		}
	}
}

type gpuLine struct{ subtask, container, indexes string }

func gpuLines(t *testing.T, path string) []gpuLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []gpuLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "YARN_AM_FLINK_GPU ")
		if !ok {
			continue
		}
		var l gpuLine
		for _, f := range strings.Fields(rest) {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "subtask":
				l.subtask = v
			case "container":
				l.container = v
			case "indexes":
				l.indexes = v
			}
		}
		out = append(out, l)
	}
	return out
}

// TestFlinkFailureRootCause: a job that throws fails, and the REST API's root cause is the job's own
// exception, as the AM reports it.
func TestFlinkFailureRootCause(t *testing.T) {
	fe := needFlink(t)
	dir := workDir(t)
	conf, restURL := clusterConf(t, fe, 1, 1)
	rest := &REST{URL: restURL}
	jm := prepare(t, RoleApplication, Spec{Home: fe.home, Conf: conf, Dir: dir, LogDir: dir, MemoryMiB: 768,
		UserJars: []string{fe.jar}, Args: []string{"fail"}})
	// The JobManager runs as the AM's driver would run it: RunApplication to the job's end.
	jmOut, err := os.Create(filepath.Join(dir, "jobmanager.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer jmOut.Close()
	type result struct {
		o   *Outcome
		err error
	}
	done := make(chan result, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	go func() {
		o, err := RunApplication(ctx, jm, rest, 100*time.Millisecond, 15*time.Second, jmOut, jmOut)
		done <- result{o, err}
	}()
	t.Cleanup(func() { cancel(); <-done })
	tmDir := filepath.Join(dir, "tm")
	os.MkdirAll(tmDir, 0o755)
	tm := prepare(t, RoleTaskManager, Spec{Home: fe.home, Conf: conf, Dir: tmDir, LogDir: tmDir, MemoryMiB: 1024,
		GPUs: map[string][]string{"gpu": {"7"}}, UserJars: []string{fe.jar}})
	start(t, "taskmanager", tm, tmDir)
	r := <-done
	done <- r // for the cleanup
	if r.err != nil {
		t.Fatalf("%v; the JobManager's log ends:\n%s", r.err, fileTail(jm.LogFile))
	}
	o := r.o
	if o.Job.State != "FAILED" || o.RootCause == nil {
		t.Fatalf("job %+v, root cause %v: want FAILED with a root cause", o.Job, o.RootCause)
	}
	rc := o.RootCause
	// RunApplication stopped the JobManager: its REST API is gone.
	if _, err := rest.Jobs(context.Background()); err == nil {
		t.Error("the JobManager still answers after RunApplication returned")
	}
	t.Logf("root cause: %s; exception %s, message %q", rc, rc.Exception, rc.Message)
	if !strings.Contains(rc.Cause, "java.lang.IllegalStateException: yarn-am-flink-test deliberate failure in subtask 0") {
		t.Errorf("root cause %q, want the job's IllegalStateException", rc.Cause)
	}
}

// parallelismLines returns the parallelism of every YARN_AM_FLINK_PARALLELISM line in path.
func parallelismSeen(path string) map[string]int {
	data, _ := os.ReadFile(path)
	seen := map[string]int{}
	for _, line := range strings.Split(string(data), "\n") {
		rest, ok := strings.CutPrefix(line, "YARN_AM_FLINK_PARALLELISM ")
		if !ok {
			continue
		}
		for _, f := range strings.Fields(rest) {
			if v, ok := strings.CutPrefix(f, "parallelism="); ok {
				seen[v]++
			}
		}
	}
	return seen
}

// TestFlinkReactiveRescale: with scheduler-mode reactive, the unbounded job runs at the parallelism
// of the slots it has: 1 TaskManager x 2 slots runs it at 2; a second TaskManager rescales it to 4;
// stopping that TaskManager brings it back to 2 (docs/flink.md#reactive-scaling).
func TestFlinkReactiveRescale(t *testing.T) {
	fe := needFlink(t)
	dir := workDir(t)
	conf, restURL := clusterConf(t, fe, 2, 1)
	for k, v := range map[string]string{
		"scheduler-mode": "reactive",
		// Rescale as soon as a TaskManager comes (Flink waits 30 s between rescalings by default).
		"jobmanager.adaptive-scheduler.scaling-interval.min": "0 s",
		"restart-strategy.type":                              "fixed-delay",
		"restart-strategy.fixed-delay.attempts":              "100",
		"restart-strategy.fixed-delay.delay":                 "1 s",
	} {
		conf.Set(k, v)
	}
	rest := &REST{URL: restURL}
	jm := prepare(t, RoleApplication, Spec{Home: fe.home, Conf: conf, Dir: dir, LogDir: dir, MemoryMiB: 768,
		UserJars: []string{fe.jar}, Args: []string{"stream"}})
	jmRun := start(t, "jobmanager", jm, dir)
	startTM := func(name, index string) *running {
		tmDir := filepath.Join(dir, name)
		os.MkdirAll(tmDir, 0o755)
		tm := prepare(t, RoleTaskManager, Spec{Home: fe.home, Conf: conf, Dir: tmDir, LogDir: tmDir, MemoryMiB: 1024,
			GPUs: map[string][]string{"gpu": {index}}, UserJars: []string{fe.jar}})
		return start(t, name, tm, tmDir, "CONTAINER_ID="+name)
	}
	tm0 := startTM("container_tm_0", "0")
	waitFor(t, "the job RUNNING at parallelism 2", []*running{jmRun, tm0}, func() (bool, error) {
		return parallelismSeen(tm0.stdout)["2"] == 2, nil
	})
	t0 := time.Now()
	tm1 := startTM("container_tm_1", "1")
	all := []*running{jmRun, tm0, tm1}
	waitFor(t, "the second TaskManager registered", all, func() (bool, error) {
		list, err := rest.TaskManagers(context.Background())
		return err == nil && len(list) == 2, err
	})
	registered := time.Since(t0)
	up := waitFor(t, "the job rescaled to 4", all, func() (bool, error) {
		return parallelismSeen(tm0.stdout)["4"]+parallelismSeen(tm1.stdout)["4"] == 4, nil
	})
	before := parallelismSeen(tm0.stdout)["2"]
	t1 := time.Now()
	tm1.stop(t)
	waitFor(t, "the job back at parallelism 2", []*running{jmRun, tm0}, func() (bool, error) {
		return parallelismSeen(tm0.stdout)["2"] >= before+2, nil
	})
	down := time.Since(t1)
	jobs, err := rest.Jobs(context.Background())
	if err != nil || len(jobs) != 1 || jobs[0].State != "RUNNING" {
		t.Errorf("jobs %v %v, want the one job RUNNING", jobs, err)
	}
	t.Logf("measured (load %s): the second TaskManager prepared, started and registered in %v, the job rescaled 2 -> 4 %v after that; 4 -> 2 took %v from its SIGTERM",
		loadAvg(), registered.Round(time.Millisecond), up.Round(time.Millisecond), down.Round(time.Millisecond))
}

// submitJar uploads jar to a session cluster and runs it (POST /jars/upload, POST /jars/<id>/run),
// returning the job id.
func submitJar(t *testing.T, restURL, jar string, args ...string) string {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("jarfile", filepath.Base(jar))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(jar)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(data)
	mw.Close()
	resp, err := http.Post(restURL+"/jars/upload", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	var up struct {
		Filename string `json:"filename"`
		Status   string `json:"status"`
	}
	err = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&up)
	resp.Body.Close()
	if err != nil || up.Status != "success" {
		t.Fatalf("upload: %s %+v %v", resp.Status, up, err)
	}
	run, _ := json.Marshal(map[string]any{"entryClass": "yarnam.flinkjob.Job", "programArgsList": args})
	resp, err = http.Post(restURL+"/jars/"+filepath.Base(up.Filename)+"/run", "application/json", bytes.NewReader(run))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ran struct {
		JobID string `json:"jobid"`
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err := json.Unmarshal(raw, &ran); err != nil || ran.JobID == "" {
		t.Fatalf("run: %s %s %v", resp.Status, raw, err)
	}
	return ran.JobID
}

// TestFlinkSessionCluster: a session JobManager and one TaskManager (GPU index 5, started from
// Process.CommandLine through bash) without the job's jar on its classpath; a job submitted to the REST API runs there (its code shipped by Flink's blob
// server) and sees the TaskManager's GPU.
func TestFlinkSessionCluster(t *testing.T) {
	fe := needFlink(t)
	dir := workDir(t)
	conf, restURL := clusterConf(t, fe, 2, 1)
	rest := &REST{URL: restURL}
	jm := prepare(t, RoleSession, Spec{Home: fe.home, Conf: conf, Dir: dir, LogDir: dir, MemoryMiB: 768})
	jmRun := start(t, "jobmanager", jm, dir)
	tmDir := filepath.Join(dir, "tm")
	os.MkdirAll(tmDir, 0o755)
	tm := prepare(t, RoleTaskManager, Spec{Home: fe.home, Conf: conf, Dir: tmDir, LogDir: tmDir, MemoryMiB: 1024,
		GPUs: map[string][]string{"gpu": {"5"}}})
	// This TaskManager starts from its one-line command, through bash, as a YARN launch command would.
	viaBash := &Process{Argv: []string{"/bin/bash", "-c", tm.CommandLine()}}
	tmRun := start(t, "container_tm_5", viaBash, tmDir, "CONTAINER_ID=container_tm_5")
	all := []*running{jmRun, tmRun}
	waitFor(t, "1 registered TaskManager", all, func() (bool, error) {
		list, err := rest.TaskManagers(context.Background())
		return err == nil && len(list) == 1, err
	})
	id := submitJar(t, restURL, fe.jar, "gpu", "2")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	o, err := rest.WaitJob(ctx, 100*time.Millisecond, jmRun.exited)
	if err != nil {
		t.Fatal(err)
	}
	if o.Job.ID != id || o.Job.State != "FINISHED" {
		t.Fatalf("job %+v (root cause %v), want %s FINISHED", o.Job, o.RootCause, id)
	}
	lines := gpuLines(t, tmRun.stdout)
	if len(lines) != 2 {
		t.Fatalf("%d GPU lines, want 2; the TaskManager's output ends:\n%s", len(lines), fileTail(tmRun.stdout))
	}
	for _, l := range lines {
		if l.indexes != "5" || l.container != "container_tm_5" {
			t.Errorf("%+v, want container_tm_5 with GPU 5", l)
		}
	}
	// A session cluster outlives its jobs.
	if jobs, err := rest.Jobs(context.Background()); err != nil || len(jobs) != 1 {
		t.Errorf("after the job: %v %v", jobs, err)
	}
}
