// Command bench runs the same workload with yarn-am and with Hadoop's DistributedShell on a running mini
// cluster, alternating A B A B, and reports medians, yarn-am/DistributedShell ratios, a CSV and a PNG
// chart. `make bench` (testdata/bench/run.sh) starts the cluster, runs this and stops the cluster.
//
// Definitions, the same for both tools (every time is measured on this machine's clock):
//
//   - submit: the moment the client command (yarn-am submit --detach, or DistributedShell's Client) is
//     started; the client's own start-up is part of what a user waits for.
//   - all started: the latest "Container ... transitioned from SCHEDULED to RUNNING" line the
//     NodeManagers log for the application's worker containers (the AM container excluded), once N of
//     them have reached RUNNING.
//   - finished: the ResourceManager's finishedTime of the application (REST ws/v1/cluster/apps/<id>).
//   - AM peak RSS and CPU: the AM container's main process (found through /proc/<pid>/cwd, the
//     container's work directory, and its command name: yarn-am or java), sampled every 50 ms until it
//     exits: its last VmHWM and utime+stime.
//   - floor: the NM heartbeat interval (yarn-site.xml) and, per container, RM allocation ("NEW to
//     ALLOCATED") to NM RUNNING, and the NM's own part (its first state change for the container to
//     RUNNING).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

const (
	toolYarnAM = "yarn-am"
	toolDShell = "dshell"
	// toolYarnAMAny is yarn-am with taskexecutor.locality = "any": plain any-node asks, the AM before
	// node-local spreading, measured in the same run.
	toolYarnAMAny = "yarn-am-any"
)

type config struct {
	out, yarnAM, nvidiaSMI, rmWeb, dshellJar, hadoopJava, confDir, clusterLog, chartScript string
	sizes                                                                                  []int
	pairs, warmup                                                                          int
	gpu                                                                                    []bool
	runTimeout                                                                             time.Duration
	compareAny                                                                             bool
	busy                                                                                   []int // sizes of the half-busy scenario (no GPU)
	mode                                                                                   string
	flink                                                                                  flinkConfig
}

// The -mode values: which rows run.
const (
	modeAll    = "all"    // the DistributedShell rows, then the Flink row
	modeDShell = "dshell" // yarn-am against DistributedShell only
	modeFlink  = "flink"  // the Flink row only
	// modeFlinkDemand: the TaskManager counts of [flink] taskmanagers = "demand" against Flink's own
	// YARN mode, step by step (flinkdemand.go); not part of all.
	modeFlinkDemand = "flink-demand"
	// modeAutoscale: the autoscaler's rate step, its measured timeline and its replay under
	// yarn-am's and Flink's operator's defaults (autoscale.go), from the trace of -autoscale-trace;
	// not part of all.
	modeAutoscale = "autoscale"
)

// run is one measured application.
type run struct {
	Tool       string
	N          int
	GPU        bool
	Pair       int
	App        string
	Final      string
	Started    int     // worker containers seen RUNNING
	AllStarted float64 // seconds from submit; -1 if not all started
	Finished   float64 // seconds from submit
	RSSMiB     float64 // AM VmHWM
	CPUSec     float64 // AM utime+stime
	AMRunning  float64 // seconds from submit until the AM container ran (NM log); -1 if unknown
	FirstAlloc float64 // seconds from submit until the RM allocated the first worker container
	AllocSpan  float64 // seconds from the first to the last worker allocation (the scheduler's pace)
	AllocToRun float64 // median over the run's containers, seconds
	NMToRun    float64 // median, seconds
	Load1      float64 // 1-minute load average when the run started
	Busy       bool    // another application held half the cluster during the run
}

func main() {
	var cfg config
	var sizes, gpus, busy string
	flag.StringVar(&cfg.out, "out", "testdata/bench/out", "output directory")
	flag.StringVar(&cfg.yarnAM, "yarn-am", "bin/yarn-am", "yarn-am binary")
	flag.StringVar(&cfg.nvidiaSMI, "nvidia-smi", "testdata/fake-nvidia-smi/nvidia-smi", "fake nvidia-smi shipped with the GPU jobs")
	flag.StringVar(&cfg.chartScript, "chart-script", "testdata/bench/chart.gp", "gnuplot script that draws chart.png")
	flag.StringVar(&sizes, "sizes", "8,16,32", "container counts, comma-separated")
	flag.IntVar(&cfg.pairs, "pairs", 3, "A/B pairs per size and GPU setting (at least 1)")
	flag.IntVar(&cfg.warmup, "warmup", 1, "unrecorded A/B pairs (smallest size, no GPU) first: the cluster's JVM warms up")
	flag.StringVar(&gpus, "gpu", "no,yes", "GPU settings to run: no, yes or no,yes")
	flag.BoolVar(&cfg.compareAny, "compare-any", true, "also run yarn-am with taskexecutor.locality = \"any\" (plain any-node asks) in every pair")
	flag.StringVar(&busy, "busy", "32", "sizes of the half-busy scenario (another DistributedShell application holds half the cluster), comma-separated; \"\" for none")
	flag.DurationVar(&cfg.runTimeout, "run-timeout", 3*time.Minute, "give up on one application after this long (it is killed)")
	flag.StringVar(&cfg.mode, "mode", modeAll, "rows to run: all (DistributedShell rows, then the Flink row), dshell, flink, flink-demand (TaskManagers on demand against Flink's YARN mode, alone) or autoscale (the autoscaler's rate step replayed, from -autoscale-trace)")
	flag.StringVar(&cfg.flink.home, "flink-home", defaultFlinkHome(), "Flink home of make flink-dist (lib/, plugins/, conf/)")
	flag.StringVar(&cfg.flink.jar, "flink-job", "bin/flink-job/yarn-am-flink-job.jar", "the test job's jar (make flink-job)")
	flag.IntVar(&cfg.flink.pairs, "flink-pairs", 3, "yarn-am/Flink pairs of the Flink row (at least 1)")
	flag.IntVar(&cfg.flink.warmup, "flink-warmup", 1, "unrecorded yarn-am/Flink pairs first (the first localises the distribution on the nodes)")
	flag.StringVar(&cfg.flink.ownJVMOpts, "flink-own-jvm-opts", "", "JVM options for Flink's own JobManager and TaskManagers (env.java.opts.jobmanager and .taskmanager), e.g. the late-C2 flags yarn-am gives its own: Flink's own mode at the same JIT settings")
	flag.IntVar(&cfg.flink.tm, "flink-taskmanagers", 4, "TaskManagers (1 slot, 1 GPU each) and the job's parallelism")
	flag.DurationVar(&cfg.flink.timeout, "flink-timeout", 5*time.Minute, "give up on one Flink-row application after this long (it is killed)")
	trace := flag.String("autoscale-trace", "", "with -mode autoscale: the rate-step trace TestFlinkAutoscaleFollowsARateStep wrote (YARN_AM_AUTOSCALE_TRACE)")
	flag.Parse()
	if cfg.mode == modeAutoscale {
		// The trace is all it reads: no cluster.
		if *trace == "" {
			fmt.Fprintln(os.Stderr, "bench: -mode autoscale needs -autoscale-trace FILE (testdata/bench/run.sh -mode autoscale records one)")
			os.Exit(2)
		}
		if err := os.MkdirAll(cfg.out, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		if err := autoscaleRow(*trace, cfg.out, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if err := setup(&cfg, sizes, gpus, busy); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	if err := benchmark(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func setup(cfg *config, sizes, gpus, busy string) error {
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("-sizes=%q: want positive integers separated by commas, like 8,16,32", sizes)
		}
		cfg.sizes = append(cfg.sizes, n)
	}
	if strings.TrimSpace(busy) != "" {
		for _, s := range strings.Split(busy, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < 1 {
				return fmt.Errorf("-busy=%q: want positive integers separated by commas, like 16,32, or \"\" for no half-busy scenario", busy)
			}
			cfg.busy = append(cfg.busy, n)
		}
	}
	for _, g := range strings.Split(gpus, ",") {
		switch strings.TrimSpace(g) {
		case "no":
			cfg.gpu = append(cfg.gpu, false)
		case "yes":
			cfg.gpu = append(cfg.gpu, true)
		default:
			return fmt.Errorf("-gpu=%q: want no, yes or no,yes", gpus)
		}
	}
	if cfg.pairs < 1 {
		return fmt.Errorf("-pairs=%d: want at least 1", cfg.pairs)
	}
	switch cfg.mode {
	case modeAll, modeDShell, modeFlink, modeFlinkDemand:
	default:
		return fmt.Errorf("-mode=%q: want all, dshell, flink or flink-demand", cfg.mode[:min(len(cfg.mode), 40)])
	}
	if cfg.flink.pairs < 1 || cfg.flink.warmup < 0 || cfg.flink.tm < 1 || cfg.flink.tm > 8 {
		return fmt.Errorf("-flink-pairs=%d, -flink-warmup=%d, -flink-taskmanagers=%d: want at least 1 pair, 0 or more warm-ups and 1 to 8 TaskManagers (the mini cluster has 8 GPUs)",
			cfg.flink.pairs, cfg.flink.warmup, cfg.flink.tm)
	}
	env := map[string]*string{"YARN_AM_RM_WEB": &cfg.rmWeb, "YARN_AM_DSHELL_JAR": &cfg.dshellJar,
		"YARN_AM_HADOOP_JAVA": &cfg.hadoopJava, "HADOOP_CONF_DIR": &cfg.confDir}
	for k, p := range env {
		if *p = os.Getenv(k); *p == "" {
			return fmt.Errorf("$%s is not set: source the mini cluster's env file (make minicluster-up; . .minicluster/env)", k)
		}
	}
	cfg.clusterLog = filepath.Join(filepath.Dir(cfg.confDir), "logs", "minicluster.log")
	for _, p := range []*string{&cfg.yarnAM, &cfg.nvidiaSMI, &cfg.out, &cfg.flink.home, &cfg.flink.jar} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = abs
	}
	for _, f := range []string{cfg.yarnAM, cfg.nvidiaSMI, cfg.dshellJar, cfg.hadoopJava, cfg.clusterLog} {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	return os.MkdirAll(filepath.Join(cfg.out, "logs"), 0o755)
}

func benchmark(cfg config) error {
	start := time.Now()
	var table strings.Builder
	var files []string
	runs := 0
	if cfg.mode == modeFlinkDemand {
		t, err := flinkDemandBench(cfg, &cfg.flink)
		if err != nil {
			return fmt.Errorf("the demand comparison: %w", err)
		}
		fmt.Print(t)
		return os.WriteFile(filepath.Join(cfg.out, "flink-demand.md"), []byte(t), 0o644)
	}
	if cfg.mode != modeFlink {
		t, png, n, err := dshellBench(cfg)
		if err != nil {
			return err
		}
		table.WriteString(t)
		files = append(files, "CSV:   "+filepath.Join(cfg.out, "results.csv"))
		if png != "" {
			files = append(files, "Chart: "+png)
		}
		runs += n
	}
	var flinkErr error
	if cfg.mode != modeDShell {
		var t string
		if t, flinkErr = flinkBench(cfg, &cfg.flink); flinkErr == nil {
			table.WriteString(t)
			files = append(files, "CSV:   "+filepath.Join(cfg.out, "flink.csv")+" (the Flink row)")
			runs += 2 * cfg.flink.pairs
		}
	}
	// A failed Flink row still leaves the DistributedShell rows' tables printed and written.
	fmt.Print(table.String())
	if err := os.WriteFile(filepath.Join(cfg.out, "summary.md"), []byte(table.String()), 0o644); err != nil {
		return err
	}
	if flinkErr != nil {
		return fmt.Errorf("the Flink row: %w", flinkErr)
	}
	fmt.Println()
	for _, f := range files {
		fmt.Println(f)
	}
	fmt.Printf("Table: %s\n", filepath.Join(cfg.out, "summary.md"))
	fmt.Printf("Took %s for %d recorded runs.\n", time.Since(start).Round(time.Second), runs)
	return nil
}

// dshellBench runs yarn-am against DistributedShell and returns the tables, the chart's path ("" when
// not drawn) and the number of recorded runs; it writes results.csv.
func dshellBench(cfg config) (string, string, int, error) {
	hb := heartbeatMS(cfg.confDir)
	var runs []run
	start := time.Now()
	tools := cfg.tools()
	total := (len(cfg.sizes)*len(cfg.gpu) + len(cfg.busy)) * cfg.pairs * len(tools)
	for p := 1; p <= cfg.warmup; p++ {
		for _, tool := range tools {
			r, err := measure(cfg, tool, cfg.sizes[0], false, false, -p)
			if err != nil {
				return "", "", 0, err
			}
			fmt.Printf("[warm-up %5.0fs] %-7s N=%-2d: %s %s, all started %.2fs (not recorded)\n", time.Since(start).Seconds(), tool, r.N, r.App, r.Final, r.AllStarted)
		}
	}
	for _, gpu := range cfg.gpu {
		for _, n := range cfg.sizes {
			for p := 1; p <= cfg.pairs; p++ {
				for _, tool := range tools {
					r, err := measure(cfg, tool, n, gpu, false, p)
					if err != nil {
						return "", "", 0, err
					}
					runs = append(runs, r)
					printRun(len(runs), total, start, r)
				}
			}
		}
	}
	if len(cfg.busy) > 0 {
		stop, err := holdHalf(cfg)
		if err != nil {
			return "", "", 0, err
		}
		for _, n := range cfg.busy {
			for p := 1; p <= cfg.pairs; p++ {
				for _, tool := range tools {
					r, err := measure(cfg, tool, n, false, true, p)
					if err != nil {
						stop()
						return "", "", 0, err
					}
					runs = append(runs, r)
					printRun(len(runs), total, start, r)
				}
			}
		}
		stop()
	}
	if err := writeCSV(filepath.Join(cfg.out, "results.csv"), runs); err != nil {
		return "", "", 0, err
	}
	png, err := chart(cfg, runs)
	if err != nil {
		fmt.Println("chart: not drawn:", err)
	}
	return report(cfg, runs, hb), png, len(runs), nil
}

func printRun(i, total int, start time.Time, r run) {
	busy := ""
	if r.Busy {
		busy = " half-busy"
	}
	fmt.Printf("[%2d/%d %5.0fs] %-11s N=%-2d gpu=%-3v%s pair %d: %s %s, all started %.2fs, finished %.2fs, AM peak RSS %.1f MiB, AM CPU %.2fs (load %.2f)\n",
		i, total, time.Since(start).Seconds(), r.Tool, r.N, yesNo(r.GPU), busy, r.Pair, r.App, r.Final, r.AllStarted, r.Finished, r.RSSMiB, r.CPUSec, r.Load1)
}

// tools are the tools of one pair, in the order they run.
func (cfg config) tools() []string {
	if cfg.compareAny {
		return []string{toolYarnAM, toolYarnAMAny, toolDShell}
	}
	return []string{toolYarnAM, toolDShell}
}

// holdHalf starts a DistributedShell application that holds half of the mini cluster (4 containers of
// 2 GB, 2 vcores and 1 GPU: 8 of 16 GB, 8 of 16 vcores, 4 of 8 GPUs, plus its AM) until stop kills it,
// and waits until all its containers run.
func holdHalf(cfg config) (stop func(), err error) {
	cmd := exec.Command(cfg.hadoopJava, "org.apache.hadoop.yarn.applications.distributedshell.Client",
		"-jar", cfg.dshellJar, "-appname", "bench-holder", "-shell_command", "sleep 3600", "-num_containers", "4",
		"-master_memory", "256", "-master_vcores", "1", "-container_resources", "memory-mb=2048,vcores=2,yarn.io/gpu=1", "-timeout", "3600000")
	s, err := startClient(cmd, filepath.Join(cfg.out, "logs", "holder.log"), "the half-busy holder", cfg.runTimeout)
	if err != nil {
		return nil, err
	}
	app := s.app
	stop = func() {
		exec.Command(cfg.yarnAM, "kill", app).Run()
		cmd.Process.Kill()
		<-s.done
		s.log.Close()
	}
	deadline := time.Now().Add(cfg.runTimeout)
	for {
		var body struct {
			App struct {
				RunningContainers int `json:"runningContainers"`
			} `json:"app"`
		}
		resp, err := http.Get(cfg.rmWeb + "/ws/v1/cluster/apps/" + app)
		if err == nil {
			json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
		}
		if body.App.RunningContainers >= 5 {
			fmt.Printf("half-busy: %s holds 4 containers of 2 GB, 2 vcores, 1 GPU (and its AM)\n", app)
			return stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("the half-busy holder %s did not get its 4 containers within %s", app, cfg.runTimeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func yesNo(b bool) string { return map[bool]string{true: "yes", false: "no"}[b] }

// appRE finds the application a client submitted in its output: YARN's client library's "Submitted
// application application_..." (DistributedShell, Flink's CliFrontend) or yarn-am submit's "submitted
// application_...". Only that line counts: yarn-am submit names other applications before it (the
// class-data-sharing archive's name carries the id of the run that made it).
var appRE = regexp.MustCompile(`[Ss]ubmitted (?:application )?(application_\d+_\d+)`)

// measure submits one application and follows it to its end.
func measure(cfg config, tool string, n int, gpu, busy bool, pair int) (run, error) {
	r := run{Tool: tool, N: n, GPU: gpu, Busy: busy, Pair: pair, AllStarted: -1, AMRunning: -1, FirstAlloc: -1, Load1: load1()}
	name := fmt.Sprintf("%s-n%d-gpu%s-%d", tool, n, yesNo(gpu), pair)
	if busy {
		name = fmt.Sprintf("%s-n%d-busy-%d", tool, n, pair)
	}
	if pair < 0 {
		name = fmt.Sprintf("%s-warmup%d", tool, -pair)
	}
	logOffset := fileSize(cfg.clusterLog)
	var cmd *exec.Cmd
	switch tool {
	case toolYarnAM, toolYarnAMAny:
		job, err := writeJob(cfg, n, gpu, tool == toolYarnAMAny)
		if err != nil {
			return r, err
		}
		cmd = exec.Command(cfg.yarnAM, "submit", job, "--detach", "--name", "bench-"+name)
	default:
		res := "memory-mb=256,vcores=1"
		if gpu {
			res += ",yarn.io/gpu=1"
		}
		cmd = exec.Command(cfg.hadoopJava, "org.apache.hadoop.yarn.applications.distributedshell.Client",
			"-jar", cfg.dshellJar, "-appname", "bench-"+name, "-shell_command", "true", "-num_containers", strconv.Itoa(n),
			"-master_memory", "256", "-master_vcores", "1", "-container_resources", res)
	}
	cl, err := startClient(cmd, filepath.Join(cfg.out, "logs", name+".log"), tool, cfg.runTimeout)
	if err != nil {
		return r, err
	}
	defer cl.log.Close()
	r.App = cl.app
	submit, clientDone := cl.submit, cl.done

	ctx, cancel := context.WithTimeout(context.Background(), cfg.runTimeout)
	defer cancel()
	samp := make(chan amSample, 1)
	go func() { samp <- sampleAM(ctx, r.App, amComm[tool]) }()
	rep, err := waitFinished(ctx, cfg.rmWeb, r.App)
	if err != nil {
		exec.Command(cfg.yarnAM, "kill", r.App).Run()
		r.Final = "TIMEOUT"
	} else {
		r.Final = rep.FinalStatus
		r.Finished = float64(rep.FinishedTime)/1000 - float64(submit.UnixNano())/1e9
	}
	s := <-samp
	r.RSSMiB, r.CPUSec = float64(s.hwmKiB)/1024, s.cpu
	select {
	case <-clientDone:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-clientDone
	}
	// The NMs log a container's RUNNING within milliseconds; give the log a moment to be written.
	time.Sleep(300 * time.Millisecond)
	ev, err := containerEvents(cfg.clusterLog, logOffset, r.App)
	if err != nil {
		return r, err
	}
	var last, first, lastAlloc time.Time
	var a2r, n2r []float64
	for id, e := range ev {
		if strings.HasSuffix(id, "_000001") {
			if !e.running.IsZero() {
				r.AMRunning = e.running.Sub(submit).Seconds()
			}
			continue
		}
		if !e.allocated.IsZero() && (first.IsZero() || e.allocated.Before(first)) {
			first = e.allocated
		}
		if e.allocated.After(lastAlloc) {
			lastAlloc = e.allocated
		}
		if e.running.IsZero() {
			continue
		}
		r.Started++
		if e.running.After(last) {
			last = e.running
		}
		if !e.allocated.IsZero() {
			a2r = append(a2r, e.running.Sub(e.allocated).Seconds())
		}
		if !e.nmFirst.IsZero() {
			n2r = append(n2r, e.running.Sub(e.nmFirst).Seconds())
		}
	}
	if r.Started >= n {
		r.AllStarted = last.Sub(submit).Seconds()
	}
	if !first.IsZero() {
		r.FirstAlloc = first.Sub(submit).Seconds()
		r.AllocSpan = lastAlloc.Sub(first).Seconds()
	}
	r.AllocToRun, r.NMToRun = median(a2r), median(n2r)
	return r, nil
}

// writeJob writes the yarn-am job for n containers (256 MiB, 1 vcore, optionally 1 GPU) running `true`.
func writeJob(cfg config, n int, gpu, any bool) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "name = \"bench\"\nmax-attempts = 1\n")
	if gpu {
		b.WriteString(`"external-resources" = "gpu"
"external-resource.gpu.amount" = 1
"external-resource.gpu.yarn.config-key" = "yarn.io/gpu"
`)
	}
	fmt.Fprintf(&b, "\n[am]\nmemory = 256\nvcores = 1\n\n[taskexecutor]\ninstances = %d\ncommand = \"true\"\nmemory = 256\nvcores = 1\nmax-failures = 0\n", n)
	locality := "spread"
	if any {
		locality = "any"
	}
	fmt.Fprintf(&b, "locality = %q\n", locality)
	if gpu {
		fmt.Fprintf(&b, "files = [%q]\n\n[taskexecutor.env]\nPATH = \"$PWD:/usr/local/bin:/usr/bin:/bin\"\nFAKE_GPU_COUNT = \"4\"\n", cfg.nvidiaSMI)
	}
	p := filepath.Join(cfg.out, "jobs", fmt.Sprintf("n%d-gpu%s-%s.toml", n, yesNo(gpu), locality))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", err
	}
	return p, os.WriteFile(p, []byte(b.String()), 0o644)
}

type appReport struct {
	State        string `json:"state"`
	FinalStatus  string `json:"finalStatus"`
	StartedTime  int64  `json:"startedTime"`
	FinishedTime int64  `json:"finishedTime"`
}

// waitFinished polls the RM's REST API until the application is FINISHED, FAILED or KILLED.
func waitFinished(ctx context.Context, web, app string) (appReport, error) {
	for {
		var body struct {
			App appReport `json:"app"`
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, web+"/ws/v1/cluster/apps/"+app, nil)
		req.Header.Set("Accept", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
		}
		if err == nil {
			switch body.App.State {
			case "FINISHED", "FAILED", "KILLED":
				return body.App, nil
			}
		}
		select {
		case <-ctx.Done():
			return appReport{}, fmt.Errorf("%s: not finished: %w", app, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

type amSample struct {
	hwmKiB int64
	cpu    float64
}

// amComm is the command name of each tool's AM process (the launch script's shells and the short-lived
// commands it runs, like cp and find, share the AM container's working directory).
var amComm = map[string]string{toolYarnAM: "yarn-am", toolYarnAMAny: "yarn-am", toolDShell: "java"}

// sampleAM finds the AM container's main process (its working directory is the AM container's, its
// command name is comm) and samples its VmHWM and CPU time until it exits.
func sampleAM(ctx context.Context, app, comm string) amSample {
	amDir := "/appcache/" + app + "/container_"
	var s amSample
	pid := 0
	for ctx.Err() == nil {
		if pid == 0 {
			pid = findAM(amDir, strings.TrimPrefix(app, "application_"), comm)
		}
		if pid != 0 {
			hwm, cpu, ok := procStats(pid)
			if !ok {
				return s // exited
			}
			s.hwmKiB, s.cpu = max(s.hwmKiB, hwm), max(s.cpu, cpu)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return s
}

func findAM(amDir, appNum, want string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd")
		if err != nil || !strings.Contains(cwd, amDir) {
			continue
		}
		c := cwd[strings.LastIndex(cwd, "/")+1:]
		// The AM is the first container of attempt 1: container_[eNN_]<ts>_<seq>_01_000001.
		if !strings.Contains(c, appNum+"_01_") || !strings.HasSuffix(c, "_000001") {
			continue
		}
		if comm, _ := os.ReadFile("/proc/" + e.Name() + "/comm"); strings.TrimSpace(string(comm)) == want {
			return pid
		}
	}
	return 0
}

// procStats reads VmHWM (KiB) and utime+stime (seconds) of pid; false once it is gone or a zombie.
func procStats(pid int) (int64, float64, bool) {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, false
	}
	f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+2:])) // fields from 3 (state) on
	if len(f) < 13 || f[0] == "Z" {
		return 0, 0, false
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	stt, _ := strconv.ParseFloat(f[12], 64)
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, false
	}
	var hwm int64
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			hwm, _ = strconv.ParseInt(strings.Fields(l)[1], 10, 64)
		}
	}
	return hwm, (ut + stt) / 100, true // USER_HZ is 100 on Linux
}

type containerEvent struct{ allocated, nmFirst, running time.Time }

var (
	logTimeRE = regexp.MustCompile(`^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) `)
	ctrRE     = regexp.MustCompile(`container_(?:e\d+_)?\d+_\d+_\d+_(\d+)`)
)

// containerEvents reads the mini cluster's log from offset and returns, per container of app (the AM's
// ends in _000001), when the RM allocated it, when its NM first saw it, and when the NM reported it
// RUNNING.
func containerEvents(path string, offset int64, app string) (map[string]*containerEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	return containerEventsFrom(f, app)
}

// containerEventsFrom is containerEvents on the log's lines from r.
func containerEventsFrom(f io.Reader, app string) (map[string]*containerEvent, error) {
	prefix := "container_" + strings.TrimPrefix(app, "application_") + "_"
	out := map[string]*containerEvent{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 4<<20)
	for sc.Scan() {
		l := sc.Text()
		if !strings.Contains(l, prefix) || !strings.Contains(l, "ransitioned from") {
			continue
		}
		tm := logTimeRE.FindStringSubmatch(l)
		m := ctrRE.FindStringSubmatch(l)
		if tm == nil || m == nil || !strings.Contains(m[0], prefix[len("container_"):]) {
			continue
		}
		t, err := time.ParseInLocation("2006-01-02 15:04:05,000", tm[1], time.Local)
		if err != nil {
			continue
		}
		e := out[m[0]]
		if e == nil {
			e = &containerEvent{}
			out[m[0]] = e
		}
		switch {
		case strings.Contains(l, "RMContainerImpl") && strings.Contains(l, "from NEW to ALLOCATED"):
			e.allocated = t
		case strings.Contains(l, "ContainerImpl") && !strings.Contains(l, "RMContainerImpl"):
			if e.nmFirst.IsZero() {
				e.nmFirst = t
			}
			if strings.Contains(l, "to RUNNING") && e.running.IsZero() {
				e.running = t
			}
		}
	}
	return out, sc.Err()
}

func fileSize(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}

func load1() float64 {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// heartbeatMS reads yarn.resourcemanager.nodemanagers.heartbeat-interval-ms from yarn-site.xml.
func heartbeatMS(confDir string) string {
	b, err := os.ReadFile(filepath.Join(confDir, "yarn-site.xml"))
	if err != nil {
		return "?"
	}
	var c struct {
		Props []struct {
			Name  string `xml:"name"`
			Value string `xml:"value"`
		} `xml:"property"`
	}
	if xml.Unmarshal(b, &c) != nil {
		return "?"
	}
	for _, p := range c.Props {
		if p.Name == "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms" {
			return p.Value
		}
	}
	return "1000 (YARN default)"
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return -1
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func writeCSV(path string, runs []run) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write([]string{"tool", "containers", "gpu", "pair", "app", "final_status", "containers_started",
		"submit_to_all_started_s", "submit_to_finished_s", "am_peak_rss_mib", "am_cpu_s", "submit_to_am_running_s", "submit_to_first_alloc_s", "alloc_span_s",
		"alloc_to_running_median_s", "nm_to_running_median_s", "load1", "half_busy"})
	for _, r := range runs {
		w.Write([]string{r.Tool, strconv.Itoa(r.N), yesNo(r.GPU), strconv.Itoa(r.Pair), r.App, r.Final, strconv.Itoa(r.Started),
			ff(r.AllStarted), ff(r.Finished), ff(r.RSSMiB), ff(r.CPUSec), ff(r.AMRunning), ff(r.FirstAlloc), ff(r.AllocSpan), ff(r.AllocToRun), ff(r.NMToRun), ff(r.Load1), yesNo(r.Busy)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func ff(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

type key struct {
	n         int
	gpu, busy bool
}

// rows are the table rows: every size without and with GPUs, then the half-busy sizes.
func (cfg config) rows() []key {
	var out []key
	for _, gpu := range cfg.gpu {
		for _, n := range cfg.sizes {
			out = append(out, key{n, gpu, false})
		}
	}
	for _, n := range cfg.busy {
		out = append(out, key{n, false, true})
	}
	return out
}

// label is a row's N and GPU cells.
func (k key) label() string {
	if k.busy {
		return fmt.Sprintf("| %d | no, half busy |", k.n)
	}
	return fmt.Sprintf("| %d | %s |", k.n, yesNo(k.gpu))
}

// med returns the median of field over the successful runs of tool at k.
func med(runs []run, tool string, k key, field func(run) float64) float64 {
	var v []float64
	for _, r := range runs {
		if r.Tool == tool && r.N == k.n && r.GPU == k.gpu && r.Busy == k.busy && r.Final == "SUCCEEDED" && field(r) >= 0 {
			v = append(v, field(r))
		}
	}
	return median(v)
}

func report(cfg config, runs []run, hb string) string {
	var b strings.Builder
	fields := []struct {
		name string
		f    func(run) float64
		unit string
	}{
		{"submit → all started", func(r run) float64 { return r.AllStarted }, "s"},
		{"submit → finished", func(r run) float64 { return r.Finished }, "s"},
		{"AM peak RSS", func(r run) float64 { return r.RSSMiB }, "MiB"},
		{"AM CPU", func(r run) float64 { return r.CPUSec }, "s"},
	}
	fmt.Fprintf(&b, "\nMedians of %d pair(s) per row (yarn-am / DistributedShell = ratio; below 1 means yarn-am is better)\n\n", cfg.pairs)
	b.WriteString("| N | GPU |")
	for _, f := range fields {
		fmt.Fprintf(&b, " %s (%s) |", f.name, f.unit)
	}
	b.WriteString("\n| ---: | --- |" + strings.Repeat(" --- |", len(fields)) + "\n")
	for _, k := range cfg.rows() {
		b.WriteString(k.label())
		for _, f := range fields {
			y, d := med(runs, toolYarnAM, k, f.f), med(runs, toolDShell, k, f.f)
			fmt.Fprintf(&b, " %s / %s = **%s** |", num(y), num(d), ratio(y, d))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\nWhere the time to \"all started\" goes (medians, seconds; yarn-am / DistributedShell):\n\n")
	b.WriteString("| N | GPU | submit → AM container running | AM running → first worker allocated | first allocated → all started |\n| ---: | --- | --- | --- | --- |\n")
	phases := []func(run) float64{
		func(r run) float64 { return r.AMRunning },
		func(r run) float64 { return sub(r.FirstAlloc, r.AMRunning) },
		func(r run) float64 { return sub(r.AllStarted, r.FirstAlloc) },
	}
	for _, k := range cfg.rows() {
		b.WriteString(k.label())
		for _, f := range phases {
			fmt.Fprintf(&b, " %s / %s |", num(med(runs, toolYarnAM, k, f)), num(med(runs, toolDShell, k, f)))
		}
		b.WriteString("\n")
	}
	if cfg.compareAny {
		started := func(r run) float64 { return r.AllStarted }
		fmt.Fprintf(&b, "\nNode-local spreading (taskexecutor.locality = \"spread\") against plain any-node asks (\"any\", the default) and DistributedShell, same run (medians, seconds):\n\n")
		b.WriteString("| N | GPU | submit → all started: spread / any / DistributedShell | spread ÷ DS | any ÷ DS | spread ÷ any | first allocated → all started: spread / any / DS |\n| ---: | --- | --- | --- | --- | --- | --- |\n")
		for _, k := range cfg.rows() {
			y, a, d := med(runs, toolYarnAM, k, started), med(runs, toolYarnAMAny, k, started), med(runs, toolDShell, k, started)
			f := phases[2]
			fmt.Fprintf(&b, "%s %s / %s / %s | **%s** | %s | **%s** | %s / %s / %s |\n", k.label(), num(y), num(a), num(d), ratio(y, d), ratio(a, d), ratio(y, a),
				num(med(runs, toolYarnAM, k, f)), num(med(runs, toolYarnAMAny, k, f)), num(med(runs, toolDShell, k, f)))
		}
	}
	failed := 0
	for _, r := range runs {
		if r.Final != "SUCCEEDED" || r.AllStarted < 0 {
			failed++
		}
	}
	if failed > 0 {
		fmt.Fprintf(&b, "\n%d run(s) did not succeed or did not start every container; they are left out of the medians (see results.csv).\n", failed)
	}
	var a2r, n2rY, n2rD, pace []float64
	for _, r := range runs {
		if r.FirstAlloc >= 0 && r.N > 1 && r.Tool != toolYarnAM {
			pace = append(pace, r.AllocSpan/float64(r.N-1))
		}
		if r.AllocToRun >= 0 {
			a2r = append(a2r, r.AllocToRun)
		}
		if r.NMToRun >= 0 && !r.GPU {
			if r.Tool != toolDShell {
				n2rY = append(n2rY, r.NMToRun)
			} else {
				n2rD = append(n2rD, r.NMToRun)
			}
		}
	}
	minA2R := -1.0
	for _, r := range runs {
		if r.AllocToRun >= 0 && (minA2R < 0 || r.AllocToRun < minA2R) {
			minA2R = r.AllocToRun
		}
	}
	fmt.Fprintf(&b, "\nFloor of this cluster:\n\n")
	fmt.Fprintf(&b, "| what | value |\n| --- | --- |\n")
	fmt.Fprintf(&b, "| NodeManager heartbeat interval (allocations happen on NM heartbeats) | %s ms |\n", hb)
	fmt.Fprintf(&b, "| RM allocation pace of any-node asks: first → last worker allocated, per container, median over the DistributedShell and locality-\"any\" runs (%s containers per NM heartbeat on 2 NMs) | %s s |\n",
		perBeat(median(pace), hb), num(median(pace)))
	fmt.Fprintf(&b, "| bare container (`true`, nothing to localise), NM start request → RUNNING, median (DistributedShell runs) | %s s |\n", num(median(n2rD)))
	fmt.Fprintf(&b, "| yarn-am container (localises the yarn-am binary), NM start request → RUNNING, median | %s s |\n", num(median(n2rY)))
	fmt.Fprintf(&b, "| RM allocation → NM RUNNING, per-run median: best run / median run | %s s / %s s |\n", num(minA2R), num(median(a2r)))
	fmt.Fprintf(&b, "\nLoad average (1 min) at the runs' starts: %s (2 cores; the machine is shared).\n", loadRange(runs))
	return b.String()
}

func loadRange(runs []run) string {
	if len(runs) == 0 {
		return "-"
	}
	lo, hi := runs[0].Load1, runs[0].Load1
	var v []float64
	for _, r := range runs {
		lo, hi = min(lo, r.Load1), max(hi, r.Load1)
		v = append(v, r.Load1)
	}
	return fmt.Sprintf("min %.2f, median %.2f, max %.2f", lo, median(v), hi)
}

// perBeat says how many containers the RM hands out per NM heartbeat, from the allocation pace.
func perBeat(pace float64, hbMS string) string {
	ms, err := strconv.ParseFloat(strings.Fields(hbMS + " x")[0], 64)
	if err != nil || pace <= 0 {
		return "?"
	}
	return strconv.FormatFloat(ms/1000/2/pace, 'f', 1, 64)
}

// sub is a-b, or -1 when either is unknown.
func sub(a, b float64) float64 {
	if a < 0 || b < 0 {
		return -1
	}
	return a - b
}

func num(v float64) string {
	if v < 0 {
		return "-"
	}
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func ratio(y, d float64) string {
	if y < 0 || d <= 0 {
		return "-"
	}
	return strconv.FormatFloat(y/d, 'f', 2, 64)
}

// chart writes the medians for gnuplot and draws testdata/bench/chart.gp into chart.png.
func chart(cfg config, runs []run) (string, error) {
	dat := filepath.Join(cfg.out, "medians.dat")
	var b strings.Builder
	b.WriteString("# containers yam_started_nogpu ds_started_nogpu yam_finished_nogpu ds_finished_nogpu yam_started_gpu ds_started_gpu yam_finished_gpu ds_finished_gpu\n")
	started := func(r run) float64 { return r.AllStarted }
	finished := func(r run) float64 { return r.Finished }
	for _, n := range cfg.sizes {
		fmt.Fprintf(&b, "%d", n)
		for _, gpu := range []bool{false, true} {
			k := key{n, gpu, false}
			for _, f := range []func(run) float64{started, finished} {
				for _, tool := range []string{toolYarnAM, toolDShell} {
					v := med(runs, tool, k, f)
					if v < 0 {
						b.WriteString(" NaN")
					} else {
						fmt.Fprintf(&b, " %.3f", v)
					}
				}
			}
		}
		b.WriteString("\n")
	}
	if err := os.WriteFile(dat, []byte(b.String()), 0o644); err != nil {
		return "", err
	}
	gp, err := exec.LookPath("gnuplot")
	if err != nil {
		return "", fmt.Errorf("gnuplot is not installed (apt-get install gnuplot-nox); the data is in %s", dat)
	}
	png := filepath.Join(cfg.out, "chart.png")
	script := cfg.chartScript
	has := map[bool]int{}
	for _, g := range cfg.gpu {
		has[g] = 1
	}
	cmd := exec.Command(gp, "-e", fmt.Sprintf("dat=%q; out=%q; nogpu=%d; gpu=%d", dat, png, has[false], has[true]), script)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("gnuplot %s: %w: %s", script, err, out)
	}
	return png, nil
}

// submitter is a submitting client started by startClient.
type submitter struct {
	app    string       // the application it named
	submit time.Time    // when it was started
	done   <-chan error // its exit
	log    *os.File     // its output; the caller closes it
}

// startClient starts cmd (a tool's submitting client) with its output copied into the file logPath and
// waits until it names its application, exits, or timeout passes.
func startClient(cmd *exec.Cmd, logPath, tool string, timeout time.Duration) (*submitter, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	appCh := make(chan string, 1)
	submit := time.Now()
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		sent := false
		for sc.Scan() {
			// Each line with the seconds since submit at which the bench read it: where the client's
			// own time goes (the Flink row's waterfall).
			fmt.Fprintf(logf, "+%.3fs %s\n", time.Since(submit).Seconds(), sc.Text())
			if m := appRE.FindStringSubmatch(sc.Text()); m != nil && !sent {
				appCh <- m[1]
				sent = true
			}
		}
		io.Copy(io.Discard, pr)
	}()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); pw.Close() }()
	select {
	case app := <-appCh:
		return &submitter{app: app, submit: submit, done: done, log: logf}, nil
	case err := <-done:
		logf.Close()
		return nil, fmt.Errorf("%s exited (%w) before naming its application; see %s", tool, err, logf.Name())
	case <-time.After(timeout):
		cmd.Process.Kill()
		logf.Close()
		return nil, fmt.Errorf("%s named no application within %s; see %s", tool, timeout, logf.Name())
	}
}
